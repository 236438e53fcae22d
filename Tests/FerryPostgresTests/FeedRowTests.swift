import FerryBackend
import FerryRecords
import NIOCore
import Testing

@testable import FerryPostgres

/// Reading a feed row's composite value (`record_send`'s binary form) in place, and refusing any bytes that are not it.
@Suite struct FeedRowTests {
    /// A column of a composite: its type's OID and its bytes, `nil` for NULL.
    private typealias Column = (oid: UInt32, bytes: [UInt8]?)

    /// The composite's bytes: the column count, then each column's OID, length and bytes, big-endian.
    private static func composite(_ columns: [Column], count: Int32? = nil) -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.writeInteger(count ?? Int32(columns.count))
        for column in columns {
            buffer.writeInteger(column.oid)
            if let bytes = column.bytes {
                buffer.writeInteger(Int32(bytes.count))
                buffer.writeBytes(bytes)
            } else {
                buffer.writeInteger(Int32(-1))
            }
        }
        return Array(buffer.readableBytesView)
    }

    private static func integer<Value: FixedWidthInteger>(_ value: Value) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// A live record's columns: name, type, tag, seq, created, modified, deleted, fields (`jsonb`: version 1, then text).
    private static func columns(fields: [UInt8]? = [1] + Array(#"{"n": {"type": "INT64", "value": 1}}"#.utf8)) -> [Column] {
        [
            (25, Array("car-1".utf8)), (25, Array("Car".utf8)), (25, Array("2a".utf8)), (20, integer(Int64(74))),
            // 2020-01-01 00:00:00.1235 UTC and 1999-12-31 23:59:59.9994 UTC, in microseconds since 2000.
            (1184, integer(Int64(631_152_000_123_500))), (1184, integer(Int64(-600))), (16, [0]), (3802, fields),
        ]
    }

    private static func read(_ bytes: [UInt8]) throws -> FeedRow { try FeedRow(composite: ByteBuffer(bytes: bytes), store: "db") }

    @Test func aRowIsReadInPlace() throws {
        let row = try Self.read(Self.composite(Self.columns()))
        #expect(row.name == "car-1" && row.type == "Car" && row.tag == "2a" && row.sequence == 74 && !row.isDeleted)
        #expect(row.created == 1_577_836_800_124 && row.modified == 946_684_799_999, "rounded half away from zero")
        let fields = try row.requiredFieldsRange(in: ZoneID(zoneName: "Z"), store: "db")
        let text = row.withBytes { String(decoding: UnsafeRawBufferPointer(rebasing: $0[fields]), as: UTF8.self) }
        #expect(text == #"{"n": {"type": "INT64", "value": 1}}"#)
        #expect(row.fields.map { String(buffer: $0) } == #"{"n": {"type": "INT64", "value": 1}}"#)
    }

    @Test func aTombstoneHasNoFieldsAndTextColumnsOfAnAlikeTypeRead() throws {
        var columns = Self.columns(fields: nil)
        columns[6] = (16, [1])
        columns[2].oid = 1043  // varchar
        columns[4].oid = 1114  // timestamp
        let row = try Self.read(Self.composite(columns))
        #expect(row.tombstone(in: ZoneID(zoneName: "Z"))?.recordName == "car-1" && row.tag == "2a")
        #expect(throws: BackendError.self) { try row.requiredFieldsRange(in: ZoneID(zoneName: "Z"), store: "db") }
    }

    /// The message of the error reading `bytes` gives, `nil` when they read.
    private static func refusal(_ bytes: [UInt8]) -> String? {
        do {
            _ = try read(bytes)
            return nil
        } catch let error as BackendError {
            #expect(error.code == .damaged)
            return error.message
        } catch {
            Issue.record("not a BackendError: \(error)")
            return "\(error)"
        }
    }

    @Test func whatIsNotTheFeedsCompositeIsSaidAsSuch() {
        var columns = Self.columns()
        #expect(Self.refusal(Self.composite(Array(columns.dropLast())))?.contains("the row has 7 columns, not 8") == true)
        #expect(Self.refusal(Self.composite(columns, count: 9))?.contains("the row has 9 columns, not 8") == true)
        columns[3].oid = 23  // int4
        #expect(Self.refusal(Self.composite(columns))?.contains("column seq holds INTEGER, which Ferry does not read as BIGINT") == true)
        columns = Self.columns()
        columns[0].bytes = nil
        #expect(Self.refusal(Self.composite(columns))?.contains("column name is NULL") == true)
        columns = Self.columns(fields: [2] + Array("{}".utf8))
        #expect(Self.refusal(Self.composite(columns))?.contains("jsonb of a version") == true)
        columns = Self.columns(fields: [])
        #expect(Self.refusal(Self.composite(columns))?.contains("jsonb of a version") == true)
        columns = Self.columns()
        columns[3].bytes = [0, 0, 0, 1]
        #expect(Self.refusal(Self.composite(columns))?.contains("column seq has 4 bytes, not 8") == true)
        // A length past the end, and a negative one other than NULL's -1.
        var bytes = Self.composite(Self.columns())
        bytes.replaceSubrange(8..<12, with: Self.integer(Int32.max))
        #expect(Self.refusal(bytes)?.contains("column name claims 2147483647 bytes") == true)
        bytes.replaceSubrange(8..<12, with: Self.integer(Int32(-2)))
        #expect(Self.refusal(bytes)?.contains("column name claims a length of -2") == true)
        #expect(Self.refusal([])?.contains("the value ends before the column count") == true)
    }

    @Test func everyCutAndEveryChangedByteReadsOrIsRefused() {
        let bytes = Self.composite(Self.columns())
        for end in 0..<bytes.count {
            #expect(Self.refusal(Array(bytes[..<end])) != nil, "cut at \(end)")
        }
        for index in bytes.indices {
            for value: UInt8 in [0x00, 0x01, 0x7F, 0x80, 0xFF] {
                var changed = bytes
                changed[index] = value
                _ = Self.refusal(changed)
            }
        }
    }
}
