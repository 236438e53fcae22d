import FerryBackend
import FerryRecords
import NIOCore
import PostgresNIO

/// A row of the change feed's query: one composite cell, `ROW(name, type, tag, seq, created, modified, deleted,
/// fields)` in PostgreSQL's binary form, read in place.
///
/// One cell rather than eight: postgres-nio makes a `PostgresCell` (a buffer slice and the column's name, each
/// retained) for every cell it hands out, which cost more than everything else done with a row; the server sends the
/// composite for what the eight columns cost it. The text columns and the fields stay where they lie in the cell's
/// buffer (``withBytes(_:)`` with the ranges), the times are read from their binary form, and the fields are the
/// bytes of their `jsonb` text.
struct FeedRow: Sendable {
    /// The feed query's select list: the composite this type reads, made of the columns in this order.
    static func selectList(fields: String) -> String { "ROW(name, type, tag, seq, created, modified, deleted, \(fields))" }

    /// The cell's bytes, which ``nameRange``, ``typeRange``, ``tagRange`` and ``fieldsRange`` index.
    private let cell: ByteBuffer
    let nameRange: Range<Int>
    let typeRange: Range<Int>
    let tagRange: Range<Int>
    /// The change sequence of the row.
    let sequence: Int64
    /// Milliseconds since 1970.
    let created: Int64
    let modified: Int64
    let isDeleted: Bool
    /// Where the fields' `jsonb` text lies (after its version byte); `nil` for SQL's NULL, which a live record never
    /// has.
    let fieldsRange: Range<Int>?

    var name: String { string(nameRange) }
    var type: String { string(typeRange) }
    var tag: String { string(tagRange) }
    /// The fields' `jsonb` text, `nil` for SQL's NULL.
    var fields: ByteBuffer? {
        fieldsRange.flatMap { cell.getSlice(at: cell.readerIndex + $0.lowerBound, length: $0.count) }
    }

    /// Reads `row` of a feed of `store`.
    /// - Throws: ``BackendError`` `damaged` for a row that does not read as Ferry's layout (a schema changed by hand).
    init(_ row: PostgresRow, store: String) throws {
        var cells = row.makeIterator()
        guard let cell = cells.next(), cells.next() == nil, let bytes = cell.bytes else {
            throw Self.notTheLayout("the row is not one value", store: store)
        }
        guard cell.dataType == .record, cell.format == .binary else {
            throw Self.notTheLayout("its value is of type \(cell.dataType) in \(cell.format) form, not a composite in binary form", store: store)
        }
        try self.init(composite: bytes, store: store)
    }

    /// Reads a feed row's composite value in binary form, `bytes`, of a feed of `store`.
    /// - Throws: ``BackendError`` `damaged` for bytes that are not the feed query's composite.
    init(composite bytes: ByteBuffer, store: String) throws {
        self.cell = bytes
        var columns = try bytes.withUnsafeReadableBytes { try CompositeColumns($0, count: 8, store: store) }
        nameRange = try columns.text("name")
        typeRange = try columns.text("type")
        tagRange = try columns.text("tag")
        sequence = try columns.integer(.int8, "seq")
        created = Self.milliseconds(microsecondsSince2000: try columns.integer(.timestamptz, or: .timestamp, "created"))
        modified = Self.milliseconds(microsecondsSince2000: try columns.integer(.timestamptz, or: .timestamp, "modified"))
        isDeleted = try columns.boolean("deleted")
        // A `jsonb` value's binary form is a version byte (1) and the text the server writes for it, which the cast to
        // `text` would copy once more on the server.
        if let jsonb = try columns.column(.jsonb, or: nil, "fields") {
            guard let version = jsonb.first.map({ columns.byte(at: $0) }), version == 1 else {
                throw BackendError(
                    .damaged, "\(store): a row of the change feed holds jsonb of a version this Ferry does not read; check the server's version")
            }
            fieldsRange = jsonb.dropFirst()
        } else {
            fieldsRange = nil
        }
    }

    /// Calls `body` with the row's bytes, which the ranges index.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try cell.withUnsafeReadableBytes(body)
    }

    /// The error of a feed row of `store` that does not read as Ferry's layout, for `reason`.
    static func notTheLayout(_ reason: String, store: String) -> BackendError {
        BackendError(
            .damaged,
            "\(store): a row of the change feed does not read as Ferry's layout (\(reason)); the schema was changed outside Ferry: "
                + "check it with ferry verify")
    }

    /// The UTF-8 text in `range` of the cell.
    private func string(_ range: Range<Int>) -> String {
        withBytes { String(decoding: UnsafeRawBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    /// Microseconds since 2000-01-01 UTC in milliseconds since 1970, rounded half away from zero as
    /// ``PostgresRecordStore/milliseconds(_:)`` rounds a date.
    static func milliseconds(microsecondsSince2000 microseconds: Int64) -> Int64 {
        let (quotient, remainder) = microseconds.quotientAndRemainder(dividingBy: 1000)
        return quotient + (remainder >= 500 ? 1 : remainder <= -500 ? -1 : 0) + 946_684_800_000
    }

    /// The row's tombstone in `zone`, `nil` for a live record.
    func tombstone(in zone: ZoneID) -> Deletion? {
        isDeleted ? Deletion(recordType: type, recordName: name, zoneID: zone) : nil
    }

    /// Where the fields' text lies, or the error of a record of `store` whose fields are NULL.
    func requiredFieldsRange(in zone: ZoneID, store: String) throws -> Range<Int> {
        guard let fieldsRange else { throw Self.damaged("they are NULL", record: name, in: zone, store: store) }
        return fieldsRange
    }

    /// The error of a stored record whose fields do not decode, for `reason`.
    static func damaged(_ reason: String, record name: String, in zone: ZoneID, store: String) -> BackendError {
        BackendError(.damaged, "\(store): the fields of record \(name) in \(zone) do not decode as CloudKit JSON (\(reason)); verify the database")
    }
}

/// The columns of a composite value in PostgreSQL's binary form (`record_send`), read one after another: a column
/// count, then for each column its type's OID, its length (-1 for NULL) and its bytes, all integers big-endian.
///
/// Written by hand: postgres-nio decodes a composite only into a Swift type through its generic decoding, one
/// `PostgresCell` a column again.
private struct CompositeColumns {
    let bytes: UnsafeRawBufferPointer
    let store: String
    var offset = 4

    /// Starts reading `bytes`, which must hold `count` columns.
    init(_ bytes: UnsafeRawBufferPointer, count: Int, store: String) throws {
        self.bytes = bytes
        self.store = store
        let found = try integer(at: 0, as: Int32.self, column: "the column count")
        guard found == count else { throw FeedRow.notTheLayout("the row has \(found) columns, not \(count)", store: store) }
    }

    func byte(at index: Int) -> UInt8 { bytes[index] }

    /// The next column's bytes, `nil` for NULL, after checking that it is of `type` (or of `alike`, whose binary form
    /// is the same).
    mutating func column(_ type: PostgresDataType, or alike: PostgresDataType?, _ name: String) throws -> Range<Int>? {
        let oid = UInt32(bitPattern: try integer(at: offset, as: Int32.self, column: name))
        let length = try integer(at: offset + 4, as: Int32.self, column: name)
        guard oid == type.rawValue || oid == alike?.rawValue else {
            throw FeedRow.notTheLayout("column \(name) holds \(PostgresDataType(oid)), which Ferry does not read as \(type)", store: store)
        }
        offset += 8
        guard length >= 0 else {
            guard length == -1 else { throw FeedRow.notTheLayout("column \(name) claims a length of \(length)", store: store) }
            return nil
        }
        guard Int(length) <= bytes.count - offset else {
            throw FeedRow.notTheLayout("column \(name) claims \(length) bytes where \(bytes.count - offset) are left", store: store)
        }
        defer { offset += Int(length) }
        return offset..<offset + Int(length)
    }

    /// The next column's bytes, which may not be NULL.
    mutating func required(_ type: PostgresDataType, or alike: PostgresDataType? = nil, _ name: String) throws -> Range<Int> {
        guard let range = try column(type, or: alike, name) else { throw FeedRow.notTheLayout("column \(name) is NULL", store: store) }
        return range
    }

    /// The next column's UTF-8 text (`text`, or `varchar`, whose binary form is the same).
    mutating func text(_ name: String) throws -> Range<Int> { try required(.text, or: .varchar, name) }

    /// The next column's 8-byte integer (`bigint`, or a `timestamptz`'s or `timestamp`'s microseconds).
    mutating func integer(_ type: PostgresDataType, or alike: PostgresDataType? = nil, _ name: String) throws -> Int64 {
        let range = try required(type, or: alike, name)
        guard range.count == 8 else { throw FeedRow.notTheLayout("column \(name) has \(range.count) bytes, not 8", store: store) }
        return try integer(at: range.lowerBound, as: Int64.self, column: name)
    }

    /// The next column's `boolean`.
    mutating func boolean(_ name: String) throws -> Bool {
        let range = try required(.bool, name)
        guard range.count == 1 else { throw FeedRow.notTheLayout("column \(name) has \(range.count) bytes, not 1", store: store) }
        return bytes[range.lowerBound] != 0
    }

    /// The big-endian integer at `index`, or the error of a cell too short to hold it.
    private func integer<Value: FixedWidthInteger>(at index: Int, as: Value.Type, column: String) throws -> Value {
        guard index >= 0, MemoryLayout<Value>.size <= bytes.count - index else {
            throw FeedRow.notTheLayout("the value ends before \(column)", store: store)
        }
        return Value(bigEndian: bytes.loadUnaligned(fromByteOffset: index, as: Value.self))
    }
}
