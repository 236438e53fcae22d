import FerryCore

/// Builds a byte record: numbers, strings and digests packed into bytes, for scratch files and sort keys.
///
/// Numbers are big-endian and strings are escaped and terminated (see ``key(_:)``), so that the bytes of fields
/// written for a sort key compare, byte by byte, as the fields do one after the other.
///
/// ```swift
/// var record = ByteRecordWriter()
/// record.uint32(rank)
/// record.key(zone.zoneName)
/// record.int64(bytes)
/// try sorter.append(record.bytes)
/// ```
public struct ByteRecordWriter: Sendable {
    /// The record so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty record.
    public init() {}

    /// Empties the record, keeping its storage.
    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// Appends one byte.
    public mutating func uint8(_ value: UInt8) { bytes.append(value) }

    /// Appends 4 bytes, big-endian.
    public mutating func uint32(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends 8 bytes, big-endian.
    public mutating func uint64(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends 8 bytes that order like the signed number.
    public mutating func int64(_ value: Int64) { uint64(UInt64(bitPattern: value) ^ (1 << 63)) }

    /// Appends a string so that it orders like its UTF-8 bytes and any field after it does not change that order:
    /// bytes 0 and 1 become `01 01` and `01 02`, and a 0 byte ends it.
    public mutating func key(_ string: String) {
        for byte in string.utf8 {
            if byte < 2 {
                bytes.append(1)
                bytes.append(byte + 1)
            } else {
                bytes.append(byte)
            }
        }
        bytes.append(0)
    }

    /// Appends raw bytes of a fixed length (a digest, say).
    public mutating func raw(_ raw: some Collection<UInt8>) { bytes.append(contentsOf: raw) }

    /// Appends a string as its length (4 bytes) and UTF-8 bytes: shorter than ``key(_:)`` for what is not sorted on.
    public mutating func text(_ string: String) {
        uint32(UInt32(string.utf8.count))
        bytes.append(contentsOf: string.utf8)
    }
}

/// Reads back what a ``ByteRecordWriter`` wrote, field by field in the same order.
///
/// Records come from this process's own scratch files, so a record that ends early means the file was damaged:
/// each read throws ``CoreError`` (`readFailed`) rather than trapping.
public struct ByteRecordReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    /// A reader of one record's bytes (which must outlive it).
    package init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Whether every byte was read.
    public var isAtEnd: Bool { offset == bytes.count }

    private mutating func take(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, bytes.count - offset >= count else {
            throw CoreError(.readFailed, "a scratch record ends after \(bytes.count) bytes, \(offset + count) expected")
        }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    /// Reads one byte.
    public mutating func uint8() throws -> UInt8 { try take(1)[0] }

    /// Reads 4 bytes, big-endian.
    public mutating func uint32() throws -> UInt32 {
        try take(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Reads 8 bytes, big-endian.
    public mutating func uint64() throws -> UInt64 {
        try take(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Reads a number ``ByteRecordWriter/int64(_:)`` wrote.
    public mutating func int64() throws -> Int64 { Int64(bitPattern: try uint64() ^ (1 << 63)) }

    /// Reads a string ``ByteRecordWriter/key(_:)`` wrote.
    public mutating func key() throws -> String {
        var utf8: [UInt8] = []
        while true {
            let byte = try uint8()
            if byte == 0 { break }
            utf8.append(byte == 1 ? try uint8() - 1 : byte)
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    /// Reads `count` raw bytes.
    package mutating func raw(_ count: Int) throws -> UnsafeRawBufferPointer { try take(count) }

    /// Reads every byte left.
    package mutating func rest() -> UnsafeRawBufferPointer {
        defer { offset = bytes.count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset...])
    }

    /// Reads a string ``ByteRecordWriter/text(_:)`` wrote.
    public mutating func text() throws -> String {
        let count = Int(try uint32())
        return String(decoding: try take(count), as: UTF8.self)
    }
}
