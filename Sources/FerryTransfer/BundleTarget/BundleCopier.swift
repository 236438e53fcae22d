import FerryBackend
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
    /// Whether a source that reads lines (``LineChangeSource``) is read as lines; the bundle is the same either way.
    public var readsLines = true

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
        if readsLines, let lines = source as? any LineChangeSource, lines.readsLines {
            try copyLines(from: lines, into: writer, events, &counts)
        } else {
            try copyChanges(into: writer, events, &counts)
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

    /// Takes the source's changes into the writer one by one.
    private func copyChanges(into writer: BundleWriter, _ events: Events, _ counts: inout Counts) throws {
        try source.forEachChange { item in
            let change = item.change
            for problem in item.problems { events.warning(Self.about(item.origin, change), problem) }
            try Self.note(try writer.add(change), origin: item.origin, change: { change }, events, &counts)
            events.progress(counts.read)
        }
    }

    /// Takes a source's pages of lines into the writer: each page prepared on a worker thread (most lines through
    /// their shapes, without records), admitted in order on this one, so the bundle is the one ``copyChanges(into:_:_:)``
    /// writes.
    private func copyLines(from source: any LineChangeSource, into writer: BundleWriter, _ events: Events, _ counts: inout Counts) throws {
        let preparer = writer.preparer
        let contexts = ReusePool<LinePreparer>()
        let workers = OrderedParallelMap.defaultWorkers
        func admit(_ page: consuming PreparedPage) throws {
            for position in page.items.indices {
                switch page.items[position] {
                case .batched(let index):
                    try Self.note(
                        try writer.add(page.lines, at: index), origin: page.origin, change: { page.lines.change(at: index).change }, events, &counts)
                case .prepared(let prepared):
                    try Self.note(try writer.add(prepared), origin: page.origin, change: { prepared.change }, events, &counts)
                case .undecodable(let error, let name):
                    throw BackendError.undecodableLine(origin: page.origin, recordName: name, reason: "\(error)", cause: error)
                }
            }
            events.progress(counts.read)
        }
        try withoutActuallyEscaping(admit) { admit in
            let pipeline = OrderedPipeline<ChangeLines, PreparedPage>(
                workers: workers, window: workers * 3,
                transform: { page in
                    var preparing = contexts.take { LinePreparer(decoder: CloudKitJSONDecoder(), validator: preparer.validator) }
                    defer { contexts.give(preparing) }
                    return PreparedPage(page, preparer: preparer, preparing: &preparing)
                }, consume: admit)
            defer { pipeline.cancel() }
            try source.forEachLinePage { page in try pipeline.submit(page) }
            try pipeline.drain()
        }
    }

    /// Counts a change the writer took or refused, and tells `events` of its warnings or refusal; `change` is made
    /// only for a message.
    private static func note(
        _ admission: BundleWriter.Admission, origin: String, change: () -> RecordChange, _ events: Events, _ counts: inout Counts
    ) throws {
        counts.read += 1
        switch admission {
        case .accepted(let found):
            if !found.isEmpty {
                let about = about(origin, change())
                for warning in found { events.warning(about, warning.description) }
            }
        case .rejected(let problems):
            let change = change()
            counts.reject(change)
            try events.rejected(origin, change, problems)
        }
    }

    /// A change as warnings name it: `origin → Type name`.
    static func about(_ origin: String, _ change: RecordChange) -> String { "\(origin) → \(change.recordType) \(change.recordName)" }
}
