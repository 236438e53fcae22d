import ArgumentParser
import FerryCore
import FerryJSON
import FerryLocalStore
import FerryTransfer
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a command body: sets up logging and signal handling, and turns thrown errors into a message and an exit
/// code (through ``ExitCodes``, the only place that decides them).
enum CommandRunner {
    nonisolated(unsafe) private static var signalSources: [any DispatchSourceSignal] = []
    private static let setUp: Void = {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        // Before any command opens a database.
        SQLiteProcessSettings.apply()
        // Past a file-size limit (`ulimit -f`) a write should fail with EFBIG and be reported, not kill the process and
        // leave its scratch and partial files behind.
        signal(SIGXFSZ, SIG_IGN)
        for (signalNumber, code) in [(SIGINT, ExitCodes.interrupted), (SIGTERM, ExitCodes.terminated)] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                CleanupRegistry.removeAll()
                let note = interruptionNote.withLock { $0?() } ?? "partial output removed"
                FileHandle.standardError.write(Data("\nferry: interrupted; \(note)\n".utf8))
                _exit(code)
            }
            source.resume()
            signalSources.append(source)
        }
    }()

    /// What an interruption leaves, when it is not "partial output removed" (a local store keeps what it committed).
    static let interruptionNote = Mutex<(@Sendable () -> String)?>(nil)

    /// Runs a synchronous `body` with a console, on a thread of its own (it reads files and may wait for a backend,
    /// which no thread of the cooperative pool may do); exits with the code its result or error calls for.
    static func runBlocking(_ options: GlobalOptions, label: String, _ body: (Console) throws -> Int32) async throws {
        try await withoutActuallyEscaping(body) { body in
            try await run(options, label: label) { console in try await AsyncBridge.handOver { try body(console) } }
        }
    }

    /// Runs an async `body` (one that reads or writes a backend through the backend contract) with a console; exits
    /// with the code its result or error calls for.
    static func run(_ options: GlobalOptions, label: String, _ body: (Console) async throws -> Int32) async throws {
        _ = setUp
        let console = Console(options: options, label: label)
        let code: Int32
        do {
            code = try await body(console)
        } catch let error as ValidationError {
            throw error
        } catch {
            code = ExitCodes.code(for: error)
            report(error, code: code, console: console)
        }
        try finish(code, console: console)
    }

    /// Cleans up after a command and exits with its code.
    private static func finish(_ code: Int32, console: Console) throws {
        // Scratch directories whose last owner is still being released on a worker thread would outlive the process
        // (their removal is in a deinit): whatever is still registered goes now.
        CleanupRegistry.removeAll()
        let stale = TemporaryDirectory.staleRemoved
        if stale.directories > 0 {
            console.logger.info(
                "removed \(stale.directories) scratch directories (\(Formatting.bytes(stale.bytes))) left by ferry runs that ended without cleaning up"
            )
        }
        console.clearProgress()
        console.flush()
        if code != 0 { throw ExitCode(code) }
    }

    private static func report(_ error: any Error, code: Int32, console: Console) {
        let ferry = error as? any FerryError
        let message = ferry?.description ?? String(describing: error)
        if console.verbose, let ferry {
            console.errorStream("ferry: error: \(ferry.detailedDescription())")
        } else {
            console.errorStream("ferry: error: \(message)")
        }
        if console.json {
            let line: JSONValue = [
                "message_type": "exit_error", "code": .integer(Int64(code)),
                "error": .string(ferry?.codeName ?? "internal"), "message": .string(message),
            ]
            FileHandle.standardError.write(Data((String(decoding: JSONWriter.canonical(line), as: UTF8.self) + "\n").utf8))
        }
    }
}
