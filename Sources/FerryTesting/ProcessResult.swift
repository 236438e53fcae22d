import Foundation

/// The outcome of running a program.
public struct ProcessResult: Sendable {
    /// The exit status (or 128 + signal number).
    public var status: Int32
    /// Everything written to standard output.
    public var stdout: Data
    /// Everything written to standard error.
    public var stderr: Data

    /// Standard output as text.
    public var output: String { String(decoding: stdout, as: UTF8.self) }
    /// Standard error as text.
    public var errors: String { String(decoding: stderr, as: UTF8.self) }

    /// Runs a program to completion.
    /// - Parameters:
    ///   - executable: the program's path.
    ///   - arguments: its arguments.
    ///   - directory: the working directory.
    ///   - environment: extra environment variables.
    ///   - input: bytes for standard input.
    public static func run(
        _ executable: String, _ arguments: [String], in directory: String? = nil, environment: [String: String] = [:],
        input: Data? = nil
    ) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        var env = ProcessInfo.processInfo.environment
        env["FERRY_LOG_LEVEL"] = nil
        env["SOURCE_DATE_EPOCH"] = nil
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let outFile = try TemporaryOutput()
        let errFile = try TemporaryOutput()
        process.standardOutput = outFile.handle
        process.standardError = errFile.handle
        if let input {
            let pipe = Pipe()
            process.standardInput = pipe
            try process.run()
            pipe.fileHandleForWriting.write(input)
            try pipe.fileHandleForWriting.close()
        } else {
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }
        process.waitUntilExit()
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return ProcessResult(status: status, stdout: try outFile.contents(), stderr: try errFile.contents())
    }
}

/// A temporary file to capture output (pipes could fill up and block).
private final class TemporaryOutput {
    let url: URL
    let handle: FileHandle

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-output-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        handle = try FileHandle(forWritingTo: url)
    }

    func contents() throws -> Data {
        try handle.close()
        defer { try? FileManager.default.removeItem(at: url) }
        return try Data(contentsOf: url)
    }
}
