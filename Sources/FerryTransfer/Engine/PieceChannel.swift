import Foundation
import Synchronization

/// A bounded hand-over of byte pieces from a thread that pushes (a bundle being read) to a task that pulls (a
/// backend storing an asset): the pusher blocks while `depth` pieces wait, the puller suspends while none does.
final class PieceChannel: Sendable {
    private struct State {
        var pieces: [[UInt8]] = []
        var finished = false
        var failure: (any Error)?
        var cancelled = false
        var waiter: CheckedContinuation<[UInt8]?, any Error>?
    }

    private let state = Mutex(State())
    private let room = NSCondition()
    private let depth: Int

    /// Thrown to the pusher when the puller stopped.
    struct Cancelled: Error {}

    init(depth: Int = 4) { self.depth = depth }

    /// Pushes a piece, waiting while the channel is full.
    /// - Throws: ``Cancelled`` once the puller has stopped.
    func push(_ piece: [UInt8]) throws {
        room.lock()
        while true {
            let (full, cancelled) = state.withLock { ($0.waiter == nil && $0.pieces.count >= depth, $0.cancelled) }
            if cancelled {
                room.unlock()
                throw Cancelled()
            }
            if !full { break }
            room.wait()
        }
        room.unlock()
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pieces.append(piece)
            return nil
        }
        waiter?.resume(returning: piece)
    }

    /// Ends the pieces, with an error for the puller if the pusher failed.
    func finish(throwing error: (any Error)? = nil) {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            state.finished = true
            state.failure = error
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        if let error { waiter?.resume(throwing: error) } else { waiter?.resume(returning: nil) }
    }

    /// Tells the pusher that nobody pulls any more.
    func cancel() {
        state.withLock { $0.cancelled = true }
        wakePusher()
    }

    /// The next piece; `nil` after the last.
    func next() async throws -> [UInt8]? {
        let piece: [UInt8]?? = try state.withLock { state in
            if !state.pieces.isEmpty { return .some(state.pieces.removeFirst()) }
            if state.finished {
                if let failure = state.failure { throw failure }
                return .some(nil)
            }
            return nil
        }
        if let piece {
            wakePusher()
            return piece
        }
        return try await withCheckedThrowingContinuation { continuation in
            let ready: Result<[UInt8]?, any Error>? = state.withLock { state in
                if !state.pieces.isEmpty { return .success(state.pieces.removeFirst()) }
                if state.finished { return state.failure.map { .failure($0) } ?? .success(nil) }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
            wakePusher()
        }
    }

    /// Wakes a pusher waiting for room (a synchronous call, so that async code never holds the condition's lock).
    private func wakePusher() {
        room.lock()
        room.broadcast()
        room.unlock()
    }

    /// The pieces as a stream a backend pulls.
    var bytes: AsyncThrowingStream<[UInt8], any Error> {
        AsyncThrowingStream(unfolding: { [self] in try await self.next() })
    }
}
