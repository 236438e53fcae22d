import Foundation

/// Reads the CKRecordID of many binary keyed archives, reading in full only the first of each shape.
///
/// An app's encoder writes every record ID of a zone alike: the same objects, keys and references, record names of
/// one length (a type and a UUID). Once an archive has been read in full, the next one that has the same bytes as it
/// everywhere but in its record name's characters is read from it: its name is taken from those bytes (checked as a
/// full read checks a string) and its zone from the first. That is the answer a full read gives: it would take the
/// same steps over the same bytes (the name's object is read only as the name: no key or class name is those bytes,
/// or the first archive would have read them), and differ only in the name's characters.
///
/// ```swift
/// var reader = RecordIDArchiveReader()
/// for archive in archives { names.append(try reader.recordID(archive).recordName) }
/// ```
public struct RecordIDArchiveReader {
    /// An archive read in full, with where its record name's characters are.
    private struct Shape {
        var bytes: [UInt8]
        var name: Range<Int>
        /// Whether the name is an ASCII string object (else a UTF-8 one; UTF-16 names are always read in full).
        var ascii: Bool
        var zoneID: ArchivedZoneID
    }

    /// The shapes seen last, the most recent first.
    private var shapes: [Shape] = []
    /// How many shapes are kept: a store's record IDs come in a few, one for each zone and length of name.
    private let capacity = 8

    /// A reader with no shape known yet.
    public init() {}

    /// The CKRecordID under `$top.root` of a binary keyed archive.
    /// - Throws: ``PlistError`` as ``KeyedArchive/recordID()`` does.
    public mutating func recordID(_ bytes: UnsafeRawBufferPointer) throws(PlistError) -> ArchivedRecordID {
        for (index, shape) in shapes.enumerated() where shape.bytes.count == bytes.count {
            guard let base = bytes.baseAddress, Self.matches(shape, base) else { continue }
            let name = try BinaryPlist.string(
                bytes: UnsafeRawBufferPointer(rebasing: bytes[shape.name]), ascii: shape.ascii, at: shape.name.lowerBound)
            if index > 0 { shapes.insert(shapes.remove(at: index), at: 0) }
            return ArchivedRecordID(recordName: name, zoneID: shape.zoneID)
        }
        let plist = try BinaryPlist(borrowing: bytes)
        let (recordID, nameObject) = try KeyedArchive(plist).recordIDAndNameObject()
        if let payload = try plist.stringPayload(nameObject), payload.kind != 0x6 {
            shapes.insert(Shape(bytes: Array(bytes), name: payload.range, ascii: payload.kind == 0x5, zoneID: recordID.zoneID), at: 0)
            if shapes.count > capacity { shapes.removeLast() }
        }
        return recordID
    }

    /// Whether an archive of the shape's length has its bytes everywhere but in the name's characters.
    private static func matches(_ shape: Shape, _ base: UnsafeRawPointer) -> Bool {
        shape.bytes.withUnsafeBytes { known in
            guard let start = known.baseAddress else { return false }
            let (name, count) = (shape.name, known.count)
            return memcmp(start, base, name.lowerBound) == 0
                && memcmp(start + name.upperBound, base + name.upperBound, count - name.upperBound) == 0
        }
    }
}
