import FerryCore
import FerryTesting
import Foundation
import Testing

/// Runs the built `ferry` binary.
func ferry(_ arguments: [String], in directory: String, environment: [String: String] = [:], input: Data? = nil) throws -> ProcessResult {
    try ProcessResult.run(TestEnvironment.ferryBinary, arguments, in: directory, environment: environment, input: input)
}

/// The sample Cars Trucks Buses inputs.
enum Sample {
    static let directory = "\(TestEnvironment.packageRoot)/Samples/cars-trucks-buses"
    static let records = "\(directory)/records.ndjson"
    static let assets = "\(directory)/assets"
    /// The sample store's path inside a scratch copy made by ``storeCopy(editedBy:)``.
    static let copiedStore = "store/CarsTrucksBuses.sqlite"

    /// A scratch copy of the sample Core Data store (its model beside it, at ``copiedStore``), with `sql` run on it.
    static func storeCopy(editedBy sql: String? = nil) throws -> Scratch {
        let scratch = try Scratch()
        try FileManager.default.copyItem(atPath: "\(directory)/store", toPath: scratch.file("store"))
        if let sql { try SQLiteShell.execute(scratch.file(copiedStore), sql + "; PRAGMA wal_checkpoint(TRUNCATE);") }
        return scratch
    }
}

/// Compares output with a golden file in `Snapshots/`; `FERRY_UPDATE_SNAPSHOTS=1` rewrites the files instead.
func expectSnapshot(_ actual: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")
    let file = directory.appendingPathComponent(name)
    if ProcessInfo.processInfo.environment["FERRY_UPDATE_SNAPSHOTS"] == "1" {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try actual.write(to: file, atomically: true, encoding: .utf8)
        return
    }
    let expected = try String(contentsOf: file, encoding: .utf8)
    #expect(actual == expected, "output differs from Snapshots/\(name); run with FERRY_UPDATE_SNAPSHOTS=1 to accept", sourceLocation: sourceLocation)
}

/// Replaces run-dependent values (durations) so output can be compared with a golden file.
func normalized(_ text: String) -> String {
    text.replacingOccurrences(of: #""seconds":[0-9.e-]+"#, with: #""seconds":0"#, options: .regularExpression)
}

/// Runs `ferry` under Python's resource accounting (the test process's own children would mix other runs in).
/// - Returns: the exit status, the peak RSS in KiB, and how many lines of standard output contain `marker`, counted as
///   they stream (the output is never held).
func ferryMeasured(_ arguments: [String], in directory: String, counting marker: String = "\u{0}") throws -> (
    status: Int, peakKiB: Int, matching: Int
) {
    let script = """
        import resource, subprocess, sys
        marker = sys.argv[1].encode()
        run = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        count = sum(1 for line in run.stdout if marker in line)
        status = run.wait()
        print(status, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, count)
        """
    let run = try ProcessResult.run(
        "/usr/bin/env", ["python3", "-c", script, marker, TestEnvironment.ferryBinary] + arguments, in: directory)
    let fields = run.output.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    guard fields.count == 3 else { throw CoreError(.readFailed, "could not measure ferry \(arguments): \(run.output) \(run.errors)") }
    return (fields[0], fields[1], fields[2])
}
