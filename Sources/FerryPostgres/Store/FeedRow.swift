import FerryBackend
import FerryRecords
import Foundation
import NIOCore
import PostgresNIO

/// A row of the change feed's query (`name, type, tag, seq, created, modified, deleted, fields`), read cell by cell.
///
/// Cell by cell, each with its own type: a row decoded as one tuple instantiated generic metadata for every row. The
/// fields stay the bytes of their `jsonb` text.
struct FeedRow {
    let name: String
    let type: String
    let tag: String
    let created: Date
    let modified: Date
    let isDeleted: Bool
    /// The fields' `jsonb` text; `nil` for SQL's NULL, which a live record never has.
    let fields: ByteBuffer?

    /// Reads `row` of a feed of `store`.
    init(_ row: PostgresRow, store: String) throws {
        var cells = row.makeIterator()
        func next() throws -> PostgresCell {
            guard let cell = cells.next() else { throw BackendError(.damaged, "\(store): a feed row has too few columns") }
            return cell
        }
        name = try next().decode(String.self)
        type = try next().decode(String.self)
        tag = try next().decode(String.self)
        _ = try next()  // the change sequence, which the page's last row gives
        created = try next().decode(Date.self)
        modified = try next().decode(Date.self)
        isDeleted = try next().decode(Bool.self)
        fields = try next().bytes
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

/// What a page of the change feed's rows were taken into, how many rows came, and the last one taken.
struct FeedRows<Content: Sendable>: Sendable {
    var content: Content
    var count = 0
    var last: PostgresRow?
}
