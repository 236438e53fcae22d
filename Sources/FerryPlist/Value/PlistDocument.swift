import FerryCore

/// A property list file of any format, parsed and validated.
///
/// ```swift
/// let document = try PlistDocument(bytes: bytes)
/// let value = try document.value()          // the tree
/// let archive = try document.keyedArchive() // if it is an NSKeyedArchiver archive
/// ```
public struct PlistDocument: Sendable {
    /// The formats Ferry reads.
    public enum Format: String, Sendable, Hashable {
        case binary, xml, openStep = "openstep"
    }

    /// The format the bytes were in.
    public let format: Format
    /// The objects, in place for binary plists, as a table for the others.
    public let graph: any PlistGraph

    /// Detects the format and parses.
    /// - Throws: ``PlistError`` with the byte offset of the first problem.
    public init(bytes: [UInt8]) throws(PlistError) {
        let detected = bytes.withUnsafeBytes { buffer -> Format? in
            if BinaryPlist.hasSignature(buffer) { return .binary }
            var index = buffer.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            while index < buffer.count, [0x20, 0x09, 0x0A, 0x0D].contains(buffer[index]) { index += 1 }
            guard index < buffer.count else { return nil }
            if buffer[index] == UInt8(ascii: "<") {
                // "<?xml", "<!DOCTYPE" or "<plist" are XML; "<0a1b…>" is OpenStep data.
                let next = index + 1 < buffer.count ? buffer[index + 1] : 0
                return next == UInt8(ascii: "?") || next == UInt8(ascii: "!") || (next >= 0x61 && next <= 0x7A) ? .xml : .openStep
            }
            if [UInt8(ascii: "{"), UInt8(ascii: "("), UInt8(ascii: "\""), UInt8(ascii: "/")].contains(buffer[index]) { return .openStep }
            return nil
        }
        guard let detected else {
            throw PlistError(.notAPlist, at: 0, "not a binary, XML or OpenStep property list")
        }
        format = detected
        switch detected {
        case .binary: graph = try BinaryPlist(bytes: bytes)
        case .xml: graph = try XMLPlistReader.read(bytes)
        case .openStep: graph = try OpenStepPlistReader.read(bytes)
        }
    }

    /// Whether the document is an NSKeyedArchiver archive.
    public var isKeyedArchive: Bool { Self.isArchive(graph) }

    /// Decodes every `$top` entry of a keyed archive; `nil` if the document is not one.
    public func decodeArchive(limits: PlistLimits = PlistLimits()) throws(PlistError) -> [(key: String, value: ArchivedValue)]? {
        try Self.decodeTop(graph, limits: limits)
    }

    /// The record-ID fast path, for any format; see ``KeyedArchive/recordID()``.
    public func archivedRecordID() throws(PlistError) -> ArchivedRecordID {
        try Self.recordID(graph)
    }

    /// The system fields of a CKRecord archive, if it is one; see ``KeyedArchive/systemFields()``.
    public func archivedSystemFields() throws(PlistError) -> ArchivedSystemFields? {
        try Self.systemFields(graph)
    }

    // Opening the existential graph as a concrete type, so the archive code is specialised.
    private static func archive<Graph: PlistGraph>(_ graph: Graph) -> KeyedArchive<Graph>? { try? KeyedArchive(graph) }

    private static func isArchive<Graph: PlistGraph>(_ graph: Graph) -> Bool { archive(graph) != nil }

    private static func decodeTop<Graph: PlistGraph>(_ graph: Graph, limits: PlistLimits) throws(PlistError)
        -> [(key: String, value: ArchivedValue)]?
    {
        guard let archive = archive(graph) else { return nil }
        return try archive.decodeTop(limits: limits)
    }

    private static func recordID<Graph: PlistGraph>(_ graph: Graph) throws(PlistError) -> ArchivedRecordID {
        try KeyedArchive(graph).recordID()
    }

    private static func systemFields<Graph: PlistGraph>(_ graph: Graph) throws(PlistError) -> ArchivedSystemFields? {
        try KeyedArchive(graph).systemFields()
    }

    /// The plist as a tree.
    public func value(limits: PlistLimits = PlistLimits()) throws(PlistError) -> PlistValue {
        try PlistValue(graph, limits: limits)
    }
}
