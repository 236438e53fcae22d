import FerryBundle
import FerryCore
import FerryRecords
import Foundation

/// Copies a source's changes into a new bundle: bundles are write-once targets of the same sources the copy engine
/// reads.
///
/// A bundle source's assets, which follow its records, are extracted and checked first (``ChangeSource/stageAssets(temporaryDirectory:)``),
/// so the writer has them as the records come.
public final class BundleCopier {
    /// What the copy tells its caller as it goes.
    public struct Events {
        /// A warning about one change (`about` names it: where it came from, its type and name) or about none
        /// (`about` nil: a source's finding).
        public var warning: (_ about: String?, _ text: String) -> Void
        /// A change the bundle refused, with the reasons; `origin` is where it came from.
        public var rejected: (_ origin: String, _ change: RecordChange, _ problems: [RecordProblem]) throws -> Void
        /// Changes read so far.
        public var progress: (_ read: Int) -> Void
        /// Assets extracted from a bundle source before its records, and their bytes.
        public var staged: (_ assets: Int, _ bytes: Int64) -> Void

        /// Events that go to the given closures.
        public init(
            warning: @escaping (String?, String) -> Void, rejected: @escaping (String, RecordChange, [RecordProblem]) throws -> Void,
            progress: @escaping (Int) -> Void, staged: @escaping (Int, Int64) -> Void = { _, _ in }
        ) {
            self.warning = warning
            self.rejected = rejected
            self.progress = progress
            self.staged = staged
        }
    }

    /// What was read, for the summary.
    public struct Counts: Sendable {
        /// Changes read (accepted or rejected).
        public var read = 0
        /// Changes rejected, per record type (`nil` for deletions) and zone.
        public var rejected: [BundlePacker.RejectionKey: Int] = [:]

        mutating func reject(_ change: RecordChange) {
            rejected[BundlePacker.RejectionKey(recordType: change.isDeletion ? nil : change.recordType, zoneID: change.zoneID), default: 0] += 1
        }
    }

    let source: any ChangeSource
    let path: String
    let options: BundleWriter.Options

    /// A copy of `source` into a bundle at `path`, written with `options` (its source description is the source's).
    public init(source: any ChangeSource, path: String, options: BundleWriter.Options) {
        self.source = source
        self.path = path
        var options = options
        options.source = .init(kind: source.kind, description: source.description)
        self.options = options
    }

    /// Runs the copy; `createdAt` gives the bundle's creation time once the changes are read.
    public func run(
        _ events: Events, createdAt: () throws -> Date, progress: ((BundleWriter.Progress) -> Void)? = nil
    ) throws -> (BundleSummary, Counts) {
        let staged = try source.stageAssets(temporaryDirectory: options.temporaryDirectory)
        if staged.assets > 0 { events.staged(staged.assets, staged.bytes) }
        let writer = try BundleWriter(path: path, options: options, assets: source.assets)
        var counts = Counts()
        try source.forEachChange { item in
            let change = item.change
            if !item.problems.isEmpty {
                for problem in item.problems { events.warning(Self.about(item), problem) }
            }
            counts.read += 1
            switch try writer.add(change) {
            case .accepted(let found):
                for warning in found { events.warning(Self.about(item), warning.description) }
            case .rejected(let problems):
                counts.reject(change)
                try events.rejected(item.origin, change, problems)
            }
            events.progress(counts.read)
        }
        for finding in source.findings { events.warning(nil, finding) }
        var tally = counts
        let summary = try writer.finish(
            createdAt: try createdAt(), progress: progress,
            found: { found in
                // Repeated names and DELETE_SELF overflows are only known at the end; the writer numbers the changes.
                if found.problem.severity == .error {
                    tally.reject(found.change)
                    try events.rejected("change \(found.origin)", found.change, [found.problem])
                } else {
                    events.warning("change \(found.origin) \(found.change.recordType) \(found.change.recordName)", "\(found.problem)")
                }
            })
        return (summary, tally)
    }

    /// A change as warnings name it: `origin → Type name`.
    static func about(_ item: SourceChange) -> String { "\(item.origin) → \(item.change.recordType) \(item.change.recordName)" }
}
