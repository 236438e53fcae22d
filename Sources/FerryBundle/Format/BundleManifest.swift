import FerryCore
import FerryJSON
import FerryRecords
import Foundation

/// `data/manifest.json`: what a bundle holds, where, and in which order to apply it.
public struct BundleManifest: Sendable, Hashable {
    /// Where the bundle's records came from.
    public struct Source: Sendable, Hashable {
        /// The kind of source, such as `ndjson`, `coredata`, `local`.
        public var kind: String
        /// A description for people, such as the input file names.
        public var description: String

        /// Creates a source description.
        public init(kind: String, description: String) {
            self.kind = kind
            self.description = description
        }
    }

    /// One NDJSON payload file: the records of one type in one zone, or the deletions of one zone.
    public struct RecordFile: Sendable, Hashable {
        /// What the file holds.
        public enum Kind: String, Sendable, Hashable {
            case records, deletions
        }

        /// The path relative to the bag's base directory.
        public var path: String
        /// Records or deletions.
        public var kind: Kind
        /// The record type (for record files).
        public var recordType: String?
        /// The zone.
        public var zoneID: ZoneID
        /// The number of lines.
        public var count: Int
        /// The file's size.
        public var bytes: Int64
    }

    /// The format version.
    public var formatVersion: Int
    /// When the bundle's content was taken (also every entry's mtime).
    public var createdAt: Date
    /// The program that wrote it.
    public var createdBy: String
    /// Where the records came from.
    public var source: Source
    /// Record types, parents before children: the order to apply them in.
    public var recordTypeOrder: [String]
    /// Groups of record types that reference each other in a cycle (their order is arbitrary but fixed).
    public var dependencyCycles: [[String]]
    /// The payload files, in the order they appear in the bundle.
    public var files: RecordFileList
    /// The number of distinct assets.
    public var assetCount: Int
    /// Their total size.
    public var assetBytes: Int64

    /// The number of records.
    public var recordCount: Int { files.recordCount }
    /// The number of deletions.
    public var deletionCount: Int { files.deletionCount }

    /// Hands `manifest.json`'s bytes, pretty-printed, to `emit` in pieces, file by file, never holding them whole.
    /// - Throws: ``CoreError`` when the file list's scratch file cannot be read, or what `emit` throws.
    public func writePretty(_ emit: ([UInt8]) throws -> Void) throws {
        try JSONWriter.prettyDocument(members, streaming: "files", to: emit) { add in
            try files.forEach { try add($0.jsonValue) }
        }
    }

    /// Every member but the files.
    private var members: JSONObject {
        [
            "format": .string(BundleLayout.formatName),
            "formatVersion": .integer(Int64(formatVersion)),
            "createdAt": .string(Self.timestampText(createdAt)),
            "createdBy": .string(createdBy),
            "source": ["kind": .string(source.kind), "description": .string(source.description)],
            "recordTypeOrder": .array(recordTypeOrder.map { .string($0) }),
            "dependencyCycles": .array(dependencyCycles.map { .array($0.map { .string($0) }) }),
            "assets": ["count": .integer(Int64(assetCount)), "bytes": .integer(assetBytes)],
            "totals": ["records": .integer(Int64(recordCount)), "deletions": .integer(Int64(deletionCount))],
        ]
    }

    /// Reads `manifest.json`.
    public init(json: JSONValue) throws {
        try self.init(json: json, files: nil)
    }

    /// Reads `manifest.json` from its bytes: see ``init(reading:temporaryDirectory:)``.
    package init(bytes: [UInt8], temporaryDirectory: String? = nil) throws {
        try self.init(reading: ByteArrayReader(bytes).read, temporaryDirectory: temporaryDirectory)
    }

    /// Reads `manifest.json` as its bytes are read, file entry by file entry, never holding the document (a bundle
    /// may list hundreds of thousands of files); past a few thousand, the files go to a scratch file under
    /// `temporaryDirectory` (default `$TMPDIR`).
    /// - Parameter read: fills a buffer with the next bytes and returns their count (0 at the end).
    /// - Throws: ``BundleError``, `JSONSyntaxError` for bytes that are not JSON, ``CoreError`` when the scratch file
    ///   cannot be written, or what `read` throws.
    package init(reading read: (UnsafeMutableRawBufferPointer) throws -> Int, temporaryDirectory: String? = nil) throws {
        var files = RecordFileList.Builder(temporaryDirectory: temporaryDirectory)
        let object = try JSONParser.parseObject(reading: read, streaming: "files") { value, index in
            try files.append(try RecordFile(json: value, path: "files[\(index)]"))
        }
        guard let object else { throw Self.invalid("", "expected an object") }
        try self.init(json: .object(object), files: object["files"]?.arrayValue == nil ? nil : files.finish())
    }

    /// Reads `manifest.json`, with its files already read when `files` is given.
    private init(json: JSONValue, files decoded: RecordFileList?) throws {
        guard let object = json.objectValue else { throw Self.invalid("", "expected an object") }
        guard object["format"]?.stringValue == BundleLayout.formatName else {
            throw BundleError(.notABundle, "data/manifest.json: \"format\" is not \"\(BundleLayout.formatName)\"")
        }
        guard let version = object["formatVersion"]?.int64Value else { throw Self.invalid("formatVersion", "missing") }
        guard version == BundleLayout.formatVersion else {
            throw BundleError(
                .unsupportedVersion,
                "data/manifest.json: format version \(version) is not supported (this Ferry reads \(BundleLayout.formatVersion))")
        }
        formatVersion = Int(version)
        guard let created = object["createdAt"]?.stringValue, let date = Self.parseTimestamp(created) else {
            throw Self.invalid("createdAt", "expected an ISO 8601 UTC time")
        }
        createdAt = date
        createdBy = object["createdBy"]?.stringValue ?? ""
        let sourceObject = object["source"]?.objectValue
        source = Source(
            kind: sourceObject?["kind"]?.stringValue ?? "unknown",
            description: sourceObject?["description"]?.stringValue ?? "")
        guard let order = object["recordTypeOrder"]?.arrayValue?.compactMap(\.stringValue) else {
            throw Self.invalid("recordTypeOrder", "expected an array of record types")
        }
        recordTypeOrder = order
        dependencyCycles = (object["dependencyCycles"]?.arrayValue ?? []).map { ($0.arrayValue ?? []).compactMap(\.stringValue) }
        guard let fileList = object["files"]?.arrayValue else { throw Self.invalid("files", "expected an array") }
        files = try decoded ?? RecordFileList(fileList.enumerated().map { index, value in try RecordFile(json: value, path: "files[\(index)]") })
        guard let assets = object["assets"]?.objectValue, let count = assets["count"]?.int64Value,
            let bytes = assets["bytes"]?.int64Value, count >= 0, bytes >= 0
        else { throw Self.invalid("assets", "expected {\"count\": n, \"bytes\": n}") }
        assetCount = Int(count)
        assetBytes = bytes
    }

    init(
        createdAt: Date, createdBy: String, source: Source, recordTypeOrder: [String], dependencyCycles: [[String]],
        files: RecordFileList, assetCount: Int, assetBytes: Int64
    ) {
        formatVersion = BundleLayout.formatVersion
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.source = source
        self.recordTypeOrder = recordTypeOrder
        self.dependencyCycles = dependencyCycles
        self.files = files
        self.assetCount = assetCount
        self.assetBytes = assetBytes
    }

    static func invalid(_ path: String, _ message: String) -> BundleError {
        BundleError(.invalidMetadata, "data/manifest.json\(path.isEmpty ? "" : " \(path)"): \(message)")
    }

    /// `2026-11-22T00:00:00Z`.
    public static func timestampText(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    static func parseTimestamp(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}

extension BundleManifest.RecordFile {
    var jsonValue: JSONValue {
        var object: JSONObject = [
            "path": .string(path), "kind": .string(kind.rawValue), "zoneID": zoneID.jsonValue,
            "count": .integer(Int64(count)), "bytes": .integer(bytes),
        ]
        if let recordType { object["recordType"] = .string(recordType) }
        return .object(object)
    }

    init(json: JSONValue, path location: String) throws {
        guard let object = json.objectValue, let path = object["path"]?.stringValue,
            let kindText = object["kind"]?.stringValue, let kind = Kind(rawValue: kindText),
            let zoneJSON = object["zoneID"], let count = object["count"]?.int64Value,
            let bytes = object["bytes"]?.int64Value, count >= 0, bytes >= 0
        else {
            throw BundleManifest.invalid(location, "expected {path, kind, zoneID, count, bytes}")
        }
        let zone: ZoneID
        do {
            zone = try CloudKitJSONDecoder().decodeZoneID(zoneJSON, path: "\(location).zoneID")
        } catch {
            throw BundleManifest.invalid("", error.message)
        }
        let recordType = object["recordType"]?.stringValue
        if kind == .records && recordType == nil { throw BundleManifest.invalid(location, "a records file needs a recordType") }
        func expectedPath(_ mark: UInt8) -> String {
            kind == .records
                ? BundleLayout.recordsPath(type: recordType ?? "", zone: zone, escapeMark: mark)
                : BundleLayout.deletionsPath(zone: zone, escapeMark: mark)
        }
        let expected = expectedPath(BundleLayout.escapeMark)
        guard path == expected || path == expectedPath(BundleLayout.legacyEscapeMark) else {
            throw BundleManifest.invalid(location, "path \(path) does not match its type and zone (expected \(expected))")
        }
        self.init(path: path, kind: kind, recordType: recordType, zoneID: zone, count: Int(count), bytes: bytes)
    }
}
