import FerryCore

/// An asset as the lists of a bundle writer and verifier hold it: its digest and size, fixed-size so that it can be
/// sorted on disk, ordered by digest.
struct AssetEntry: Comparable, BitwiseCopyable {
    var digest: SHA256Digest
    var size: Int64

    static func < (lhs: Self, rhs: Self) -> Bool { (lhs.digest, lhs.size) < (rhs.digest, rhs.size) }
}
