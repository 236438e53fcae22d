import Foundation

extension UUID {
    /// The UUID as Foundation's ``uuidString`` writes it (36 characters, uppercase hex), formatted in place.
    ///
    /// On Linux `uuidString` goes through `uuid_unparse` and `sprintf`, which costs more than the rest of naming a
    /// record; record naming and reference lookups call this once per record or reference.
    package var text: String { text(prefixedBy: "") }

    /// `prefix` followed by ``text``, made as one string (a record name such as `Car.0E6F…` without a second
    /// allocation for the UUID's text).
    package func text(prefixedBy prefix: String) -> String {
        prefix.withUTF8Bytes { head in
            String(unsafeUninitializedCapacity: head.count + 36) { buffer in
                var position = 0
                for byte in head {
                    buffer[position] = byte
                    position += 1
                }
                let digits = Hex.uppercaseDigits
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
                return position
            }
        }
    }

    /// Parses exactly the form ``text`` writes (36 characters, uppercase hex, dashes at 8, 13, 18 and 23), so that
    /// `UUID(text: name)?.text == name` always holds; `nil` for anything else.
    package init?(text: String) {
        guard let uuid = text.withUTF8Bytes({ UUID(utf8: $0) }) else { return nil }
        self = uuid
    }

    /// Parses the UTF-8 bytes of exactly the form ``text`` writes; `nil` for anything else.
    package init?(utf8: UnsafeBufferPointer<UInt8>) {
        guard utf8.count == 36 else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let valid = withUnsafeMutableBytes(of: &bytes) { output -> Bool in
            var position = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    guard utf8[position] == UInt8(ascii: "-") else { return false }
                    position += 1
                }
                guard let high = Hex.value(utf8[position], lowercase: false), let low = Hex.value(utf8[position + 1], lowercase: false) else {
                    return false
                }
                output[index] = high << 4 | low
                position += 2
            }
            return true
        }
        guard valid else { return nil }
        self.init(uuid: bytes)
    }
}
