/// Writes a copy's staged rounds one after the other on a task of its own, each as soon as the one before it is
/// written.
///
/// The copy hands a round over once it is staged and waits until the round starts (``start(_:)``), so one round is
/// written while the next is read and staged, as many rounds at once as when the copy started each write itself; but
/// the next write no longer waits for the copy's task to be scheduled again first, which on a busy machine left the
/// target idle between rounds. The rounds written meanwhile come back to be reported, in order.
struct RoundWriter {
    private enum Event {
        case started
        case written(Result<CopyState.WrittenRound, any Error>)
    }

    private let rounds: AsyncStream<CopyState.StagedRound>.Continuation
    private var events: AsyncStream<Event>.AsyncIterator

    /// A writer of rounds through `sender`, each recording `checkpoint` (``CopyState/write(_:sender:checkpoint:)``).
    init(sender: ZoneSender, checkpoint: CopyState.Checkpoint) {
        let (rounds, roundsIn) = AsyncStream.makeStream(of: CopyState.StagedRound.self)
        let (events, eventsIn) = AsyncStream.makeStream(of: Event.self)
        self.rounds = roundsIn
        self.events = events.makeAsyncIterator()
        Task {
            for await round in rounds {
                eventsIn.yield(.started)
                do {
                    eventsIn.yield(.written(.success(try await CopyState.write(round, sender: sender, checkpoint: checkpoint))))
                } catch {
                    // Nothing after a failed round is written: the copy stops with its error.
                    eventsIn.yield(.written(.failure(error)))
                    break
                }
            }
            eventsIn.finish()
        }
    }

    /// Hands a staged round over and waits until its write starts.
    /// - Returns: the round written before it, if one was under way.
    /// - Throws: what writing that round threw (this one is then not written).
    mutating func start(_ round: CopyState.StagedRound) async throws -> CopyState.WrittenRound? {
        rounds.yield(round)
        var written: CopyState.WrittenRound?
        while let event = await events.next() {
            switch event {
            case .started: return written
            case .written(let result): written = try result.get()
            }
        }
        // The writer stops only after a failure, which the loop above threw.
        return written
    }

    /// Takes no more rounds and waits for the one under way.
    /// - Returns: that round once written, if there was one.
    /// - Throws: what writing it threw.
    mutating func finish() async throws -> CopyState.WrittenRound? {
        rounds.finish()
        var written: CopyState.WrittenRound?
        while let event = await events.next() {
            if case .written(let result) = event { written = try result.get() }
        }
        return written
    }
}
