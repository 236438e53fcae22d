import FerryBackend
import FerryRecords
import Foundation
import NIOCore
import PostgresNIO

/// A row of the change feed's query (`name, type, tag, seq, created, modified, deleted, fields`), read cell by cell.
///
/// Cell by cell, each with its own type: a row decoded as one tuple instantiated generic metadata for every row. The
/// text columns stay their bytes (a line is written from them; a record makes strings of them), the times are read in
/// place from their binary form, and the fields stay the bytes of their `jsonb` text.
struct FeedRow {
    let nameBytes: ByteBuffer
    let typeBytes: ByteBuffer
    let tagBytes: ByteBuffer
    /// Milliseconds since 1970.
    let created: Int64
    let modified: Int64
    let isDeleted: Bool
    /// The fields' `jsonb` text; `nil` for SQL's NULL, which a live record never has.
    let fields: ByteBuffer?

    var name: String { String(buffer: nameBytes) }
    var type: String { String(buffer: typeBytes) }
    var tag: String { String(buffer: tagBytes) }

    /// Reads `row` of a feed of `store`.
    /// - Throws: ``BackendError`` `damaged` for a row that does not read as Ferry's layout (a schema changed by hand).
    init(_ row: PostgresRow, store: String) throws {
        do {
            self = try FeedRow(reading: row, store: store)
        } catch let error as PostgresDecodingError {
            throw Self.notTheLayout(error, store: store)
        }
    }

    /// The error of a row of `store`'s feed whose cell did not decode.
    static func notTheLayout(_ error: PostgresDecodingError, store: String) -> BackendError {
        BackendError(
            .damaged,
            "\(store): a row of the change feed does not read as Ferry's layout (\(error.explanation)); the schema was changed outside Ferry: "
                + "check it with ferry verify", cause: error)
    }

    private init(reading row: PostgresRow, store: String) throws {
        var cells = row.makeIterator()
        func next() throws -> PostgresCell {
            guard let cell = cells.next() else { throw BackendError(.damaged, "\(store): a feed row has too few columns") }
            return cell
        }
        nameBytes = try Self.text(next())
        typeBytes = try Self.text(next())
        tagBytes = try Self.text(next())
        _ = try next()  // the change sequence, which the page's last row gives
        created = try Self.milliseconds(next())
        modified = try Self.milliseconds(next())
        isDeleted = try next().decode(Bool.self)
        fields = try Self.jsonText(next(), store: store)
    }

    /// A `jsonb` cell's text: its binary form is a version byte (1) and the text the server writes for it, which the
    /// cast to `text` would copy once more on the server.
    private static func jsonText(_ cell: PostgresCell, store: String) throws -> ByteBuffer? {
        guard var bytes = cell.bytes, cell.dataType == .jsonb, cell.format == .binary else { return cell.bytes }
        guard bytes.readInteger(as: UInt8.self) == 1 else {
            throw BackendError(
                .damaged, "\(store): a row of the change feed holds jsonb of a version this Ferry does not read; check the server's version")
        }
        return bytes
    }

    /// A text cell's UTF-8 bytes (a `text` column's binary form is its bytes; another type is decoded as a string).
    private static func text(_ cell: PostgresCell) throws -> ByteBuffer {
        if cell.dataType == .text, let bytes = cell.bytes { return bytes }
        return ByteBuffer(string: try cell.decode(String.self))
    }

    /// A `timestamptz` cell in milliseconds since 1970: its binary form is microseconds since 2000-01-01 UTC.
    private static func milliseconds(_ cell: PostgresCell) throws -> Int64 {
        guard cell.dataType == .timestamptz, cell.format == .binary, let bytes = cell.bytes, bytes.readableBytes == 8,
            let microseconds = bytes.getInteger(at: bytes.readerIndex, as: Int64.self)
        else { return PostgresRecordStore.milliseconds(try cell.decode(Date.self)) }
        return milliseconds(microsecondsSince2000: microseconds)
    }

    /// Microseconds since 2000-01-01 UTC in milliseconds since 1970, rounded half away from zero as
    /// ``PostgresRecordStore/milliseconds(_:)`` rounds a date.
    private static func milliseconds(microsecondsSince2000 microseconds: Int64) -> Int64 {
        let (quotient, remainder) = microseconds.quotientAndRemainder(dividingBy: 1000)
        return quotient + (remainder >= 500 ? 1 : remainder <= -500 ? -1 : 0) + 946_684_800_000
    }

    /// The row's tombstone in `zone`, `nil` for a live record.
    func tombstone(in zone: ZoneID) -> Deletion? {
        isDeleted ? Deletion(recordType: type, recordName: name, zoneID: zone) : nil
    }

    /// The fields' text, or the error of a record of `store` whose fields are NULL.
    func fieldsText(in zone: ZoneID, store: String) throws -> ByteBuffer {
        guard let fields else { throw Self.damaged("they are NULL", record: name, in: zone, store: store) }
        return fields
    }

    /// The error of a stored record whose fields do not decode, for `reason`.
    static func damaged(_ reason: String, record name: String, in zone: ZoneID, store: String) -> BackendError {
        BackendError(.damaged, "\(store): the fields of record \(name) in \(zone) do not decode as CloudKit JSON (\(reason)); verify the database")
    }
}
