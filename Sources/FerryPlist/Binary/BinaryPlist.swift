import FerryCore
import Foundation

/// A binary property list (`bplist00`), read in place: validated once, then objects are decoded on demand.
///
/// Opening checks everything Apple's reader checks (CFBinaryPList.c): the header, a trailer whose sizes fit the file,
/// offsets and reference widths of 1–8 bytes (3-byte offsets included), every offset inside the object area.
/// Each object read then checks its own bounds: counts against the bytes left, references below the object count,
/// integers up to 16 bytes. Nothing is copied and nothing allocated to read keys, so decoding the millions of small
/// keyed archives in a Core Data store is cheap.
///
/// ```swift
/// let plist = try BinaryPlist(bytes: fileBytes)
/// let root = plist.topObject
/// if try plist.kind(of: root) == .dictionary, let name = try plist.lookup(root, "name") { … }
/// ```
public struct BinaryPlist: PlistGraph, @unchecked Sendable {
    /// The file signature.
    public static let magic: [UInt8] = MagicNumber.binaryPlist.signature.bytes

    /// The bytes: owned by `owner` when copied, borrowed (valid during `withPlist`) otherwise.
    private let bytes: UnsafeRawBufferPointer
    private let owner: PlistBytes?
    public let objectCount: Int
    public let topObject: Int
    private let offsetSize: Int
    private let referenceSize: Int
    private let offsetTable: Int

    /// Reads a binary plist, copying the bytes.
    /// - Throws: ``PlistError`` naming the byte offset of the first problem.
    public init<Bytes: Collection>(bytes: Bytes) throws(PlistError) where Bytes.Element == UInt8 {
        let owner = PlistBytes(copying: bytes)
        try self.init(bytes: owner.buffer, owner: owner)
    }

    /// Reads a binary plist in place, without copying, for the duration of `body`.
    public static func withPlist<Result>(
        borrowing bytes: UnsafeRawBufferPointer, _ body: (BinaryPlist) throws -> Result
    ) throws -> Result {
        try body(BinaryPlist(bytes: bytes, owner: nil))
    }

    /// Reads a binary plist in place, without copying: the bytes must outlive it (``withPlist(borrowing:_:)`` for
    /// callers outside this module).
    package init(borrowing bytes: UnsafeRawBufferPointer) throws(PlistError) {
        try self.init(bytes: bytes, owner: nil)
    }

    /// Whether bytes start with the binary plist signature.
    package static func hasSignature(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 8 && magic.indices.allSatisfy { bytes[$0] == magic[$0] }
    }

    private init(bytes: UnsafeRawBufferPointer, owner: PlistBytes?) throws(PlistError) {
        self.bytes = bytes
        self.owner = owner
        guard Self.hasSignature(bytes) else { throw PlistError(.notAPlist, at: 0, "no bplist00 signature") }
        guard bytes.count >= 8 + 1 + 32 else { throw PlistError(.malformed, at: bytes.count, "too short for a binary plist trailer") }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        let objects = Self.readBigEndian(bytes, at: trailer + 8, size: 8)
        let top = Self.readBigEndian(bytes, at: trailer + 16, size: 8)
        let table = Self.readBigEndian(bytes, at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize) else {
            throw PlistError(.malformed, at: trailer + 6, "offset size \(offsetSize) is not between 1 and 8 bytes")
        }
        guard (1...8).contains(referenceSize) else {
            throw PlistError(.malformed, at: trailer + 7, "object reference size \(referenceSize) is not between 1 and 8 bytes")
        }
        guard objects >= 1, objects <= UInt64(trailer) else {
            throw PlistError(.malformed, at: trailer + 8, "object count \(objects) does not fit the file")
        }
        guard top < objects else { throw PlistError(.malformed, at: trailer + 16, "top object \(top) is not below the object count \(objects)") }
        guard table >= 9, table < UInt64(trailer) else {
            throw PlistError(.malformed, at: trailer + 24, "offset table at \(table) is outside the file")
        }
        let (tableBytes, overflow) = objects.multipliedReportingOverflow(by: UInt64(offsetSize))
        guard !overflow, table + tableBytes <= UInt64(trailer) else {
            throw PlistError(.malformed, at: Int(table), "the offset table of \(objects) entries runs past the trailer")
        }
        guard referenceSize >= 8 || objects <= UInt64(1) << UInt64(8 * referenceSize) else {
            throw PlistError(.malformed, at: trailer + 7, "\(referenceSize)-byte references cannot address \(objects) objects")
        }
        guard offsetSize >= 8 || table < UInt64(1) << UInt64(8 * offsetSize) else {
            throw PlistError(.malformed, at: trailer + 6, "\(offsetSize)-byte offsets cannot reach the offset table at \(table)")
        }
        objectCount = Int(objects)
        topObject = Int(top)
        offsetTable = Int(table)
        for object in 0..<objectCount {
            let offset = Self.readBigEndian(bytes, at: offsetTable + object * offsetSize, size: offsetSize)
            guard offset >= 8, offset < table else {
                throw PlistError(
                    .malformed, at: offsetTable + object * offsetSize, "object \(object) is at offset \(offset), outside the object area")
            }
        }
    }

    // MARK: - Objects

    /// Where an object starts, its marker and its count (for sized kinds), and where its payload starts.
    private struct Header {
        var offset: Int
        var marker: UInt8
        var count: Int
        var payload: Int
    }

    /// Where an object starts (checked against the object area when the plist was opened).
    @inline(__always)
    private func offset(of object: Int) -> Int {
        let position = offsetTable + object * offsetSize
        switch offsetSize {
        case 1: return Int(bytes[position])
        case 2: return Int(bytes[position]) << 8 | Int(bytes[position + 1])
        default: return Int(Self.readBigEndian(bytes, at: position, size: offsetSize))
        }
    }

    /// Reads the object reference at a byte position (already bounds-checked by the caller).
    @inline(__always)
    private func readReference(at position: Int) -> UInt64 {
        switch referenceSize {
        case 1: return UInt64(bytes[position])
        case 2: return UInt64(bytes[position]) << 8 | UInt64(bytes[position + 1])
        default: return Self.readBigEndian(bytes, at: position, size: referenceSize)
        }
    }

    private func header(_ object: Int) throws(PlistError) -> Header {
        guard object >= 0, object < objectCount else {
            throw PlistError(.malformed, "object reference \(object) is not below the object count \(objectCount)")
        }
        let offset = offset(of: object)
        let marker = bytes[offset]
        var count = Int(marker & 0x0F)
        var payload = offset + 1
        switch marker >> 4 {
        case 0x4, 0x5, 0x6, 0x7, 0xA, 0xB, 0xC, 0xD:
            if count == 0x0F {
                guard payload < offsetTable else { throw PlistError(.malformed, at: payload, "object count is missing") }
                let intMarker = bytes[payload]
                guard intMarker >> 4 == 0x1, intMarker & 0x0F <= 3 else {
                    throw PlistError(.malformed, at: payload, "expected an integer object count, found marker 0x\(String(intMarker, radix: 16))")
                }
                let size = 1 << Int(intMarker & 0x0F)
                guard payload + 1 + size <= offsetTable else { throw PlistError(.malformed, at: payload, "object count is truncated") }
                let value = Self.readBigEndian(bytes, at: payload + 1, size: size)
                guard value <= UInt64(offsetTable) else {
                    throw PlistError(.tooLarge, at: payload, "object count \(value) is larger than the file")
                }
                count = Int(value)
                payload += 1 + size
            }
        default:
            break
        }
        return Header(offset: offset, marker: marker, count: count, payload: payload)
    }

    /// Checks that `length` payload bytes fit before the offset table.
    private func require(_ header: Header, length: Int, what: String) throws(PlistError) {
        let (end, overflow) = header.payload.addingReportingOverflow(length)
        guard !overflow, end <= offsetTable else {
            throw PlistError(.tooLarge, at: header.offset, "\(what) of \(header.count) runs past the end of the object area")
        }
    }

    public func kind(of object: Int) throws(PlistError) -> PlistKind {
        let header = try header(object)
        switch header.marker {
        case 0x00: return .null
        case 0x08, 0x09: return .bool
        case 0x10...0x14: return .integer
        case 0x22, 0x23: return .real
        case 0x33: return .date
        default: break
        }
        switch header.marker >> 4 {
        case 0x4: return .data
        case 0x5, 0x6, 0x7: return .string
        case 0x8: return .uid
        case 0xA: return .array
        case 0xB: return .orderedSet
        case 0xC: return .set
        case 0xD: return .dictionary
        default:
            throw PlistError(.malformed, at: header.offset, "unknown object marker 0x\(String(header.marker, radix: 16))")
        }
    }

    public func bool(_ object: Int) throws(PlistError) -> Bool {
        let header = try header(object)
        switch header.marker {
        case 0x08: return false
        case 0x09: return true
        default: throw mismatch(header, expected: "a Boolean")
        }
    }

    public func integer(_ object: Int) throws(PlistError) -> PlistInteger {
        let header = try header(object)
        guard header.marker >> 4 == 0x1, header.marker & 0x0F <= 4 else { throw mismatch(header, expected: "an integer") }
        let size = 1 << Int(header.marker & 0x0F)
        try require(header, length: size, what: "an integer")
        switch size {
        case 1, 2, 4: return .signed(Int64(Self.readBigEndian(bytes, at: header.payload, size: size)))
        case 8: return .signed(Int64(bitPattern: Self.readBigEndian(bytes, at: header.payload, size: 8)))
        default:
            // 16 bytes: a 128-bit integer, which Apple's writer uses for unsigned values above Int64.max.
            let high = Self.readBigEndian(bytes, at: header.payload, size: 8)
            let low = Self.readBigEndian(bytes, at: header.payload + 8, size: 8)
            if high == 0 { return low <= UInt64(Int64.max) ? .signed(Int64(low)) : .unsigned(low) }
            if high == UInt64.max, low > UInt64(Int64.max) { return .signed(Int64(bitPattern: low)) }
            throw PlistError(.malformed, at: header.offset, "128-bit integer outside the 64-bit range")
        }
    }

    public func real(_ object: Int) throws(PlistError) -> Double {
        let header = try header(object)
        switch header.marker {
        case 0x22:
            try require(header, length: 4, what: "a real")
            return Double(Float(bitPattern: UInt32(Self.readBigEndian(bytes, at: header.payload, size: 4))))
        case 0x23:
            try require(header, length: 8, what: "a real")
            return Double(bitPattern: Self.readBigEndian(bytes, at: header.payload, size: 8))
        default:
            throw mismatch(header, expected: "a real number")
        }
    }

    public func date(_ object: Int) throws(PlistError) -> Double {
        let header = try header(object)
        guard header.marker == 0x33 else { throw mismatch(header, expected: "a date") }
        try require(header, length: 8, what: "a date")
        return Double(bitPattern: Self.readBigEndian(bytes, at: header.payload, size: 8))
    }

    public func data(_ object: Int) throws(PlistError) -> [UInt8] {
        Array(try dataBytes(object))
    }

    /// A data object's bytes, in place (valid while the plist's bytes are).
    package func dataBytes(_ object: Int) throws(PlistError) -> UnsafeRawBufferPointer {
        let header = try header(object)
        guard header.marker >> 4 == 0x4 else { throw mismatch(header, expected: "data") }
        try require(header, length: header.count, what: "data")
        return UnsafeRawBufferPointer(rebasing: bytes[header.payload..<header.payload + header.count])
    }

    public func string(_ object: Int) throws(PlistError) -> String {
        let header = try header(object)
        switch header.marker >> 4 {
        case 0x5:
            try require(header, length: header.count, what: "an ASCII string")
            return try Self.string(
                bytes: UnsafeRawBufferPointer(rebasing: bytes[header.payload..<header.payload + header.count]), ascii: true, at: header.payload)
        case 0x6:
            let (length, overflow) = header.count.multipliedReportingOverflow(by: 2)
            guard !overflow else { throw PlistError(.tooLarge, at: header.offset, "UTF-16 string too long") }
            try require(header, length: length, what: "a UTF-16 string")
            var units: [UInt16] = []
            units.reserveCapacity(header.count)
            for index in 0..<header.count {
                units.append(UInt16(bytes[header.payload + 2 * index]) << 8 | UInt16(bytes[header.payload + 2 * index + 1]))
            }
            var text = ""
            var decoder = UTF16()
            var iterator = units.makeIterator()
            loop: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar): text.unicodeScalars.append(scalar)
                case .emptyInput: break loop
                case .error: throw PlistError(.malformed, at: header.payload, "invalid UTF-16 (a lone surrogate) in a string")
                }
            }
            return text
        case 0x7:
            try require(header, length: header.count, what: "a UTF-8 string")
            return try Self.string(
                bytes: UnsafeRawBufferPointer(rebasing: bytes[header.payload..<header.payload + header.count]), ascii: false, at: header.payload)
        default:
            throw mismatch(header, expected: "a string")
        }
    }

    /// The characters of an ASCII (`0x5`) or UTF-8 (`0x7`) string object, checked: a byte outside ASCII, or invalid
    /// UTF-8, is refused at its offset (`offset` is where `bytes` start).
    package static func string(bytes: UnsafeRawBufferPointer, ascii: Bool, at offset: Int) throws(PlistError) -> String {
        if ascii {
            if let bad = bytes.firstIndex(where: { $0 >= 0x80 }) {
                throw PlistError(.malformed, at: offset + bad, "non-ASCII byte in an ASCII string")
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        guard let text = String(validating: Array(bytes), as: UTF8.self) else {
            throw PlistError(.malformed, at: offset, "invalid UTF-8 in a string")
        }
        return text
    }

    /// Where a string object's bytes are, and its marker's kind (`0x5` ASCII, `0x6` UTF-16, `0x7` UTF-8), `nil` for
    /// any other object; for reading strings of archives of the same shape (``RecordIDArchiveReader``).
    package func stringPayload(_ object: Int) throws(PlistError) -> (kind: UInt8, range: Range<Int>)? {
        let header = try header(object)
        let kind = header.marker >> 4
        guard (0x5...0x7).contains(kind) else { return nil }
        let (length, overflow) = header.count.multipliedReportingOverflow(by: kind == 0x6 ? 2 : 1)
        guard !overflow else { throw PlistError(.tooLarge, at: header.offset, "a string too long") }
        try require(header, length: length, what: "a string")
        return (kind, header.payload..<header.payload + length)
    }

    public func string(_ object: Int, equals text: StaticString) throws(PlistError) -> Bool {
        let header = try header(object)
        let count = text.utf8CodeUnitCount
        switch header.marker >> 4 {
        case 0x5, 0x7:
            guard header.count == count else { return false }
            try require(header, length: count, what: "a string")
            guard let base = bytes.baseAddress else { return count == 0 }
            return memcmp(base + header.payload, text.utf8Start, count) == 0
        case 0x6:
            guard header.count == count else { return false }
            try require(header, length: count * 2, what: "a UTF-16 string")
            for index in 0..<count where bytes[header.payload + 2 * index] != 0 || bytes[header.payload + 2 * index + 1] != text.utf8Start[index] {
                return false
            }
            return true
        default:
            throw mismatch(header, expected: "a string")
        }
    }

    public func uid(_ object: Int) throws(PlistError) -> Int {
        let header = try header(object)
        guard header.marker >> 4 == 0x8 else { throw mismatch(header, expected: "a UID") }
        let size = Int(header.marker & 0x0F) + 1
        guard size <= 8 else { throw PlistError(.malformed, at: header.offset, "UID of \(size) bytes") }
        try require(header, length: size, what: "a UID")
        let value = Self.readBigEndian(bytes, at: header.payload, size: size)
        guard value <= UInt64(Int32.max) else { throw PlistError(.malformed, at: header.offset, "UID \(value) is out of range") }
        return Int(value)
    }

    public func count(_ object: Int) throws(PlistError) -> Int {
        let header = try header(object)
        switch header.marker >> 4 {
        case 0xA, 0xB, 0xC:
            try require(header, length: header.count * referenceSize, what: "a collection")
        case 0xD:
            try require(header, length: 2 * header.count * referenceSize, what: "a dictionary")
        default:
            throw mismatch(header, expected: "an array, set or dictionary")
        }
        return header.count
    }

    public func element(_ object: Int, _ index: Int) throws(PlistError) -> Int {
        let header = try header(object)
        guard [0xA, 0xB, 0xC].contains(header.marker >> 4) else { throw mismatch(header, expected: "an array or set") }
        return try reference(header, slot: index)
    }

    public func key(_ object: Int, _ index: Int) throws(PlistError) -> Int {
        let header = try header(object)
        guard header.marker >> 4 == 0xD else { throw mismatch(header, expected: "a dictionary") }
        return try reference(header, slot: index)
    }

    public func value(_ object: Int, _ index: Int) throws(PlistError) -> Int {
        let header = try header(object)
        guard header.marker >> 4 == 0xD else { throw mismatch(header, expected: "a dictionary") }
        return try reference(header, slot: header.count + index)
    }

    /// The object reference in a container's `slot`th position, checked against the object count.
    private func reference(_ header: Header, slot: Int) throws(PlistError) -> Int {
        let slots = header.marker >> 4 == 0xD ? 2 * header.count : header.count
        guard slot >= 0, slot < slots else { throw PlistError(.malformed, at: header.offset, "index \(slot) out of range") }
        let position = header.payload + slot * referenceSize
        guard position + referenceSize <= offsetTable else {
            throw PlistError(.tooLarge, at: header.offset, "a container of \(header.count) runs past the end of the object area")
        }
        let target = readReference(at: position)
        guard target < UInt64(objectCount) else {
            throw PlistError(.malformed, at: position, "reference to object \(target), but there are only \(objectCount)")
        }
        return Int(target)
    }

    /// Looks a string key up in one pass over the dictionary's references, comparing ASCII keys in place.
    public func lookup(_ dictionary: Int, _ key: StaticString) throws(PlistError) -> Int? {
        let header = try header(dictionary)
        guard header.marker >> 4 == 0xD else { throw mismatch(header, expected: "a dictionary") }
        try require(header, length: 2 * header.count * referenceSize, what: "a dictionary")
        let length = key.utf8CodeUnitCount
        for index in 0..<header.count {
            let keyObject = readReference(at: header.payload + index * referenceSize)
            guard keyObject < UInt64(objectCount) else {
                throw PlistError(
                    .malformed, at: header.payload + index * referenceSize, "reference to object \(keyObject), but there are only \(objectCount)")
            }
            let keyOffset = offset(of: Int(keyObject))
            let marker = bytes[keyOffset]
            if marker >> 4 == 0x5, Int(marker & 0x0F) == length, length < 15 {
                // A short ASCII key: compare its bytes directly (the common case in keyed archives).
                guard keyOffset + 1 + length <= offsetTable else { throw PlistError(.tooLarge, at: keyOffset, "a string runs past the object area") }
                guard let base = bytes.baseAddress, memcmp(base + keyOffset + 1, key.utf8Start, length) == 0 else { continue }
            } else if try !string(Int(keyObject), equals: key) {
                continue
            }
            let valuePosition = header.payload + (header.count + index) * referenceSize
            let value = readReference(at: valuePosition)
            guard value < UInt64(objectCount) else {
                throw PlistError(.malformed, at: valuePosition, "reference to object \(value), but there are only \(objectCount)")
            }
            return Int(value)
        }
        return nil
    }

    /// The CKRecordID a keyed archive holds under `$top.root`, on the fast path, specialised for binary plists.
    public func archivedRecordID() throws(PlistError) -> ArchivedRecordID {
        try KeyedArchive(self).recordID()
    }

    private func mismatch(_ header: Header, expected: String) -> PlistError {
        PlistError(.malformed, at: header.offset, "expected \(expected), found marker 0x\(String(header.marker, radix: 16))")
    }

    /// Reads a big-endian unsigned integer of 1–8 bytes; the caller has checked the bounds.
    static func readBigEndian(_ bytes: UnsafeRawBufferPointer, at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<size { value = value << 8 | UInt64(bytes[offset + index]) }
        return value
    }
}
