import Foundation
import Synchronization

/// The files a run reads and the outputs it writes, so that no output replaces an input or another output.
///
/// Outputs are written under a temporary name and renamed over their path at the end (``AtomicOutputFile``). Were that
/// path one of the run's inputs (its records file, the source store, an asset, the bundle it just wrote), the rename
/// would destroy it. A command lists its inputs before it starts, readers add the files they come upon (assets), and
/// every output is claimed when it is opened and checked again just before its rename. Files are compared by
/// ``FileIdentity``, so links and other spellings of a path are caught too.
///
/// ```swift
/// let files = RunFiles()
/// files.add("records.ndjson", as: "the records file records.ndjson")
/// let output = try AtomicOutputFile(path: "records.ndjson", files: files, as: "the bundle")  // throws
/// ```
public final class RunFiles: Sendable {
    /// Where an output goes: its directory's identity and its name there (the file may not exist yet).
    private struct Location: Hashable {
        var directory: FileIdentity
        var name: String

        init?(path: String) {
            let url = URL(fileURLWithPath: path)
            guard let identity = FileIdentity(path: url.deletingLastPathComponent().path) else { return nil }
            directory = identity
            name = url.lastPathComponent
        }
    }

    private struct State {
        var inputs: [FileIdentity: String] = [:]
        var sets: [any InputFileSet] = []
        var outputs: [Location: (path: String, description: String)] = [:]
    }

    private let state = Mutex(State())

    /// No files yet.
    public init() {}

    /// Lists the file at `path` as an input; nothing is listed when no file is there.
    /// - Parameter description: how errors name it, such as "the records file records.ndjson".
    public func add(_ path: String, as description: String) {
        guard let identity = FileIdentity(path: path) else { return }
        add(identity, as: description)
    }

    /// Lists a file already opened or examined as an input.
    public func add(_ identity: FileIdentity, as description: String) {
        state.withLock { state in
            if state.inputs[identity] == nil { state.inputs[identity] = description }
        }
    }

    /// Lists the files a reader comes upon during the run (assets), which it is asked about when an output is checked
    /// rather than listing each one here.
    public func add(_ set: any InputFileSet) {
        state.withLock { $0.sets.append(set) }
    }

    /// Claims `path` for an output: refused when it names an input or another output claimed before.
    ///
    /// The same output may be claimed again (by a writer that checks its path early, then opens it at the end).
    /// - Parameter description: what the output is, such as "the bundle".
    /// - Throws: ``CoreError`` (`outputReplacesInput`; `writeFailed` when the path is a directory).
    public func claim(output path: String, as description: String) throws {
        try AtomicOutputFile.checkDestination(path, as: description)
        try check(output: path, as: description)
        guard let location = Location(path: path) else { return }
        try state.withLock { state in
            if let other = state.outputs[location], other.description != description {
                throw CoreError(
                    .outputReplacesInput, "\(description) \(path) is also \(other.description) \(other.path); give each output its own path")
            }
            state.outputs[location] = (path, description)
        }
    }

    /// Checks that `path` does not name an input now (just before an output is renamed there).
    /// - Throws: ``CoreError`` (`outputReplacesInput`).
    public func check(output path: String, as description: String) throws {
        guard let identity = FileIdentity(path: path) else { return }
        let (listed, sets) = state.withLock { ($0.inputs[identity], $0.sets) }
        guard let input = listed ?? sets.lazy.compactMap({ $0.inputDescription(of: identity) }).first else { return }
        throw CoreError(.outputReplacesInput, "\(description) \(path) would replace \(input); write it to another path")
    }
}

/// Files a reader comes upon during a run (the assets records name), asked about by ``RunFiles`` when an output is
/// checked, so that a run of many files does not list each one twice.
public protocol InputFileSet: AnyObject, Sendable {
    /// How errors name the file with this identity, such as "the asset photos/1.jpg"; `nil` if it is not in the set.
    func inputDescription(of identity: FileIdentity) -> String?
}
