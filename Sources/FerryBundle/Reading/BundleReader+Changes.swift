import FerryCore
import FerryRecords

extension BundleReader {
    /// Which records a read selects.
    public struct Selection: Sendable {
        /// Only these record types (all when `nil`).
        public var recordTypes: Set<String>?
        /// Only these zones, by zone name (all when `nil`).
        public var zoneNames: Set<String>?
        /// Whether deletions are included.
        public var includeDeletions = true

        /// Selects everything.
        public init(recordTypes: Set<String>? = nil, zoneNames: Set<String>? = nil, includeDeletions: Bool = true) {
            self.recordTypes = recordTypes
            self.zoneNames = zoneNames
            self.includeDeletions = includeDeletions
        }
    }

    /// Streams the canonical JSON lines of the selected records and deletions, in the bundle's order (record types
    /// parents first, then deletions).
    ///
    /// Each file's SHA-256 is checked when the file ends; on a mismatch this throws, after the lines of that file
    /// were already passed on, so a consumer must treat a thrown error as "discard the output".
    /// - Parameter body: receives each line without its newline.
    /// - Returns: the number of lines passed on.
    @discardableResult
    package func forEachChangeLine(_ selection: Selection = Selection(), _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        try forEachChangeLine(selection) { line, _, _ in try body(line) }
    }

    /// Streams the selected lines with the file each is in and its line number there.
    @discardableResult
    func forEachChangeLine(
        _ selection: Selection, _ body: (UnsafeRawBufferPointer, BundleManifest.RecordFile, Int) throws -> Void
    ) throws -> Int {
        try withoutActuallyEscaping(body) { escapable in
            let streamer = LineStreamer(reader: self, selection: selection, body: escapable)
            try scan(streamer, complete: false)
            return streamer.emitted
        }
    }

    /// Decodes the selected records and deletions, in the bundle's order.
    ///
    /// Each must be in the file of its kind, type and zone, as `verify` checks: a record filed elsewhere (the bundle
    /// was edited by hand) stops the read rather than being carried into the wrong place.
    public func forEachChange(_ selection: Selection = Selection(), _ body: (RecordChange) throws -> Void) throws {
        let decoder = CloudKitJSONDecoder()
        try forEachChangeLine(selection) { line, file, number in
            let change: RecordChange
            do {
                change = try decoder.decode(line: line)
            } catch let error as RecordError {
                throw BundleError(.invalidRecord, "\(path): \(file.path) line \(number): \(error.message)", cause: error)
            }
            let placed =
                change.zoneID == file.zoneID
                && (file.kind == .deletions ? change.isDeletion : !change.isDeletion && change.recordType == file.recordType)
            guard placed else {
                let what = change.isDeletion ? "a deletion of a \(change.recordType) record" : "a \(change.recordType) record"
                let holds = file.kind == .deletions ? "deletions" : "\(file.recordType ?? "?") records"
                throw BundleError(
                    .invalidRecord,
                    "\(path): \(file.path) line \(number): \(what) in zone \(change.zoneID), in the file of \(holds) in zone "
                        + "\(file.zoneID); the bundle was altered (ferry verify lists every problem)")
            }
            try body(change)
        }
    }
}

/// Passes selected lines through during a scan; any problem stops the scan.
private final class LineStreamer: BundleVisitor {
    let reader: BundleReader
    let selection: BundleReader.Selection
    let body: (UnsafeRawBufferPointer, BundleManifest.RecordFile, Int) throws -> Void
    var emitted = 0
    private var splitter = LineSplitter()
    private var current: BundleManifest.RecordFile?
    private let decoder = CloudKitJSONDecoder()

    init(
        reader: BundleReader, selection: BundleReader.Selection,
        body: @escaping (UnsafeRawBufferPointer, BundleManifest.RecordFile, Int) throws -> Void
    ) {
        self.reader = reader
        self.selection = selection
        self.body = body
    }

    func wants(_ entry: BundleEntry) -> Bool {
        guard case .records(let file) = entry.kind else { return false }
        if let zones = selection.zoneNames, !zones.contains(file.zoneID.zoneName) && !zones.contains(file.zoneID.description) {
            return false
        }
        switch file.kind {
        case .records:
            guard let types = selection.recordTypes else { return true }
            return types.contains(file.recordType ?? "")
        case .deletions:
            return selection.includeDeletions
        }
    }

    func begin(_ entry: BundleEntry) throws {
        guard case .records(let file) = entry.kind else { return }
        current = file
        splitter = LineSplitter()
    }

    func consume(_ bytes: UnsafeRawBufferPointer) throws {
        guard let file = current else { return }
        let filterDeletions = file.kind == .deletions && selection.recordTypes != nil
        do {
            try feed(bytes, file: file, filterDeletions: filterDeletions)
        } catch let error as BundleError where !error.message.hasPrefix(reader.path) {
            // The splitter's own errors (a line too long) name no file.
            throw BundleError(error.code, "\(reader.path): \(file.path): \(error.message)", cause: error.cause)
        }
    }

    private func feed(_ bytes: UnsafeRawBufferPointer, file: BundleManifest.RecordFile, filterDeletions: Bool) throws {
        try splitter.feed(bytes) { line, number in
            if filterDeletions {
                guard case .deletion(let deletion) = try decodeLine(line, number: number, file: file),
                    selection.recordTypes?.contains(deletion.recordType) ?? true
                else { return }
            }
            try body(line, file, number)
            emitted += 1
        }
    }

    func end(_ entry: BundleEntry, intact: Bool) throws {
        guard let file = current else { return }
        current = nil
        try splitter.finish(file: file.path)
        guard splitter.lineCount == file.count else {
            throw BundleError(.invalidRecord, "\(reader.path): \(file.path) has \(splitter.lineCount) lines, data/manifest.json says \(file.count)")
        }
    }

    func issue(_ error: BundleError) throws { throw error }

    private func decodeLine(_ line: UnsafeRawBufferPointer, number: Int, file: BundleManifest.RecordFile) throws -> RecordChange {
        do {
            return try decoder.decode(line: line)
        } catch {
            throw BundleError(.invalidRecord, "\(reader.path): \(file.path) line \(number): \(error.message)")
        }
    }
}
