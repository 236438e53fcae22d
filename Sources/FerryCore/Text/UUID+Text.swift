import Foundation

extension UUID {
    /// The UUID as Foundation's ``uuidString`` writes it (36 characters, uppercase hex), formatted in place.
    ///
    /// On Linux `uuidString` goes through `uuid_unparse` and `sprintf`, which costs more than the rest of naming a
    /// record; record naming and reference lookups call this once per record or reference.
    public var text: String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            let digits: StaticString = "0123456789ABCDEF"
            var position = 0
            withUnsafeBytes(of: uuid) { bytes in
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        buffer[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    buffer[position] = digits.utf8Start[Int(byte >> 4)]
                    buffer[position + 1] = digits.utf8Start[Int(byte & 0x0F)]
                    position += 2
                }
            }
            return 36
        }
    }
}
