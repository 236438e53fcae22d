import FerryCore
import NIOCore
import PostgresNIO

/// Content digests bound as one `bytea[]`, written straight into the statement's bindings.
///
/// postgres-nio binds an array of `ByteBuffer`s, which took a buffer per digest (made, then grown to 32 bytes) and an
/// iterator per element as it was encoded: three allocations a record for each batch a copy compares.
struct DigestArray: PostgresNonThrowingEncodable, Sendable {
    static var psqlType: PostgresDataType { .byteaArray }
    static var psqlFormat: PostgresFormat { .binary }

    let digests: [SHA256Digest]

    init(_ digests: [SHA256Digest]) { self.digests = digests }

    var count: Int { digests.count }

    /// PostgreSQL's binary array form: dimensions (1, or 0 when empty), no nulls, the element type, the length and
    /// lower bound, then each element's length and bytes.
    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.reserveCapacity(minimumWritableBytes: 20 + digests.count * 36)
        buffer.writeInteger(digests.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(0, as: Int32.self)
        buffer.writeInteger(PostgresDataType.bytea.rawValue)
        guard !digests.isEmpty else { return }
        buffer.writeInteger(Int32(digests.count))
        buffer.writeInteger(1, as: Int32.self)
        for digest in digests {
            buffer.writeInteger(32, as: Int32.self)
            digest.withUnsafeBytes { _ = buffer.writeBytes($0) }
        }
    }
}
