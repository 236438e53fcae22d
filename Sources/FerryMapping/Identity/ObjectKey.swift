/// A store object's identity in one 64-bit key: a small number (its table or entity number) in the top 16 bits,
/// XOR its primary key — the key of every per-object map the mapper keeps.
enum ObjectKey {
    static func make(_ number: Int, _ primaryKey: Int64) -> UInt64 {
        UInt64(truncatingIfNeeded: number) << 48 ^ UInt64(bitPattern: primaryKey)
    }
}
