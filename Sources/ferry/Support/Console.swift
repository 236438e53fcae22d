import FerryCore
import FerryJSON
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where a command's output goes: results on stdout (text or JSON Lines), messages and progress on stderr.
final class Console: @unchecked Sendable {
    /// Whether results are JSON Lines.
    let json: Bool
    /// Whether only errors are printed.
    let quiet: Bool
    /// Whether extra detail is printed.
    let verbose: Bool
    /// Logs, to stderr.
    let logger: Logger
    /// Whether stderr is a terminal (progress is drawn only then).
    let stderrIsTerminal: Bool
    private let stdout = OutputFile(borrowing: STDOUT_FILENO, name: "<stdout>")
    /// Whether a progress line is on screen, and when it was drawn: shared by the threads that report progress.
    private let progressState = Mutex<(shown: Bool, last: Date)>((false, .distantPast))

    init(options: GlobalOptions, label: String) {
        json = options.json
        quiet = options.quiet
        verbose = options.verbose > 0
        stderrIsTerminal = isatty(STDERR_FILENO) == 1
        var logger = Logger(label: "ferry.\(label)")
        logger.logLevel = options.logLevel
        self.logger = logger
    }

    // MARK: - Results (stdout)

    /// Writes one line of text (human mode).
    func line(_ text: String) {
        guard !json else { return }
        write(text + "\n")
    }

    /// Writes one JSON Lines message (JSON mode): `{"message_type": type, ...}`.
    func message(_ type: String, _ fields: JSONObject) {
        guard json else { return }
        var object = fields
        object["message_type"] = .string(type)
        write(String(decoding: JSONWriter.canonical(.object(object)), as: UTF8.self) + "\n")
    }

    /// Writes one JSON Lines message (JSON mode) whose member `key` is an array made element by element, never held
    /// whole (a bundle's files, say): the same line ``message(_:_:)`` writes for the whole array.
    func message(
        _ type: String, _ fields: JSONObject, streaming key: String, elements: ((JSONValue) throws -> Void) throws -> Void
    ) throws {
        guard json else { return }
        var object = fields
        object["message_type"] = .string(type)
        var writer = JSONWriter(capacity: (1 << 16) + 4096)
        try writer.object(object, streaming: key, flushEvery: 1 << 16, flush: { write(String(decoding: $0, as: UTF8.self)) }, elements: elements)
        writer.byte(UInt8(ascii: "\n"))
        write(String(decoding: writer.bytes, as: UTF8.self))
    }

    /// Writes raw bytes to stdout.
    func raw(_ bytes: UnsafeRawBufferPointer) throws {
        try stdout.write(bytes)
    }

    /// Writes text to stdout as it is (a document such as a plan).
    func rawText(_ text: String) throws {
        var text = text
        try text.withUTF8 { try stdout.write(UnsafeRawBufferPointer($0)) }
    }

    /// Flushes stdout.
    func flush() {
        try? stdout.flush()
    }

    private func write(_ text: String) {
        clearProgress()
        do {
            try stdout.write(text)
        } catch {
            // stdout closed (e.g. piped into `head`): nothing more can be said there.
        }
    }

    // MARK: - Messages (stderr)

    /// A warning on stderr (JSON mode: a `warning` message on stdout as well).
    func warning(_ text: String) {
        if json { message("warning", ["message": .string(text)]) }
        guard !quiet else { return }
        errorStream("warning: \(text)")
    }

    /// Informational text on stderr, shown unless quiet.
    func note(_ text: String) {
        guard !quiet, !json else { return }
        errorStream(text)
    }

    /// Writes a line to stderr.
    func errorStream(_ text: String) {
        clearProgress()
        flush()
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    // MARK: - Progress (stderr, terminal only)

    /// Whether progress is drawn: on a terminal, unless quiet.
    var drawsProgress: Bool { stderrIsTerminal && !quiet }

    /// Redraws a one-line progress display, at most ten times a second, only when stderr is a terminal; any thread may
    /// call it.
    func progress(_ text: @autoclosure () -> String) {
        guard drawsProgress else { return }
        let now = Date()
        let due = progressState.withLock { state -> Bool in
            guard now.timeIntervalSince(state.last) >= 0.1 else { return false }
            state = (true, now)
            return true
        }
        guard due else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K\(text())".utf8))
    }

    /// Removes the progress line.
    func clearProgress() {
        let shown = progressState.withLock { state -> Bool in
            defer { state.shown = false }
            return state.shown
        }
        guard shown else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }
}
