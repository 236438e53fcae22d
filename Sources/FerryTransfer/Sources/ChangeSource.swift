import FerryBackend
import FerryLocalStore
import FerryRecords

/// One change a source produced, with where it came from.
public struct SourceChange: Sendable {
    /// The record or deletion.
    public var change: RecordChange
    /// Where it came from, for messages and reject files (`Car p3`, a bundle file, a zone).
    public var origin: String {
        switch place {
        case .text(let text): text
        case .numbered(let name, let separator, let number): "\(name)\(separator)\(number)"
        }
    }
    /// The parts of ``origin``, put together only when a message needs them (most changes need no message, and
    /// formatting a number into a string per change costs as much as a lookup).
    private let place: Place
    /// What could not be carried over faithfully (written anyway, reported as warnings).
    public var problems: [String]
    /// The target's per-change work, done ahead on the reading thread (see ``PipelinedChangeSource/prepare``).
    package var prepared: PreparedWrite?
    /// About how many bytes the change takes in memory, as it was made (``Record/estimatedSize``, and 256 more).
    ///
    /// Worked out where the change is made, while its fields are in that core's cache: the copy engine, which cuts
    /// rounds by it, ran through every record's fields on another core first, a cache miss for each.
    package let estimatedBytes: Int

    /// Creates a change.
    public init(_ change: consuming RecordChange, origin: String, problems: [String] = []) {
        estimatedBytes = Self.estimatedBytes(of: change)
        self.change = change
        place = .text(origin)
        self.problems = problems
    }

    /// Creates a change that came from a numbered place: `<name><separator><number>` (`Car p3`, `b.tar.gz change 7`).
    public init(_ change: consuming RecordChange, origin name: String, separator: StaticString, number: Int64, problems: [String] = []) {
        estimatedBytes = Self.estimatedBytes(of: change)
        self.change = change
        place = .numbered(name, separator: separator, number: number)
        self.problems = problems
    }

    /// About how many bytes the change takes while it waits for its transaction (what a copy cuts its rounds by): its
    /// body when it was encoded ahead, else ``estimatedBytes``.
    var pendingBytes: Int {
        if let encoded = prepared?.encoded { return encoded.body.count }
        return estimatedBytes
    }

    private static func estimatedBytes(of change: borrowing RecordChange) -> Int {
        switch change {
        case .record(let record): record.estimatedSize + 256
        case .deletion: 256
        }
    }

    private enum Place: Sendable {
        case text(String)
        case numbered(String, separator: StaticString, number: Int64)
    }
}

/// Anything `ferry copy` and `ferry diff` read records from.
///
/// A Core Data store through a mapping, a bundle, a local store. Changes come parents first, deletions last, in the same order every time for the same input.
public protocol ChangeSource: AnyObject {
    /// The kind recorded in bundle manifests (`core-data`, `bundle`, `local`).
    var kind: String { get }
    /// A description for people and manifests.
    var description: String { get }
    /// What identifies this source's content and mapping, so an interrupted copy resumes only from the same input.
    var fingerprint: String { get }
    /// The bytes of the assets its records name.
    var assets: (any AssetProvider)? { get }
    /// Work before a copy into a local store (a bundle streams its assets in first, since they follow its records).
    /// - Returns: the assets newly stored, and their bytes.
    func prepare(for store: LocalStore) throws -> (assets: Int, bytes: Int64)
    /// Work before a copy into any backend: a bundle streams the assets the target lacks into it first, since they
    /// follow its records. Called on a thread outside the cooperative pool (it may wait for the target).
    /// - Returns: the assets newly stored, and their bytes.
    func prepare(for target: any RecordStore) throws -> (assets: Int, bytes: Int64)
    /// Makes ``assets`` able to supply the source's assets while its records are read, for a target that needs them
    /// then (a bundle): a bundle source extracts its own, which follow its records, into a scratch directory.
    /// - Returns: the assets made available, and their bytes (0 for sources whose assets are there already).
    func stageAssets(temporaryDirectory: String?) throws -> (assets: Int, bytes: Int64)
    /// Whether the source can supply an asset's bytes (through ``assets`` or ``prepare(for:)``).
    /// - Throws: when what the source knows of its assets cannot be read.
    func canSupply(_ asset: Asset) throws -> Bool
    /// Calls `body` with every change, in order.
    func forEachChange(_ body: (consuming SourceChange) throws -> Void) throws
    /// How many changes the source will give, when it knows (a bundle's manifest) or can tell closely (a store's
    /// object counts), for progress; `nil` when it cannot.
    var expectedChanges: Int? { get }
    /// The mapping preset the records were made with, when known (a Core Data store's plan, a bundle's manifest):
    /// sources made with different presets name and zone the same objects differently.
    var mappingPreset: String? { get }
    /// What reading found that is about no one change (a filter's field that no record has, objects that could not
    /// be read), as warnings; complete once every change has been handed out.
    var findings: [String] { get }
    /// Calls `body` with every change, in order, a batch at a time (a consumer that keeps the changes takes whole
    /// arrays instead of copying each change).
    func forEachBatch(_ body: ([SourceChange]) throws -> Void) throws
    /// Where this read of a backend's change feed ends, for a later `--since`; `nil` for sources without a feed.
    var feedPosition: FeedPosition? { get }
}

extension ChangeSource {
    /// Batches of one: a source that reads ahead in batches (``PipelinedChangeSource``) hands over its own.
    public func forEachBatch(_ body: ([SourceChange]) throws -> Void) throws {
        try forEachChange { change in try body([change]) }
    }

    public func canSupply(_ asset: Asset) throws -> Bool { try assets?.canProvide(asset) ?? false }

    public func prepare(for store: LocalStore) throws -> (assets: Int, bytes: Int64) { (0, 0) }

    public func prepare(for target: any RecordStore) throws -> (assets: Int, bytes: Int64) { (0, 0) }

    public func stageAssets(temporaryDirectory: String?) throws -> (assets: Int, bytes: Int64) { (0, 0) }

    public var findings: [String] { [] }

    public var mappingPreset: String? { nil }

    public var expectedChanges: Int? { nil }

    public var feedPosition: FeedPosition? { nil }
}
