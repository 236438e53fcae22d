import CDirectIO
import FerryCore

/// Writes around the page cache (`O_DIRECT`), for large files nobody reads back soon: a bundle, a spool read once.
///
/// Only the bundle writer needs it, so only it links the shim that knows the platform's flag (Swift's Glibc module
/// leaves `O_DIRECT` and `fallocate`'s block-shifting modes out).
public enum DirectIO {
    /// The flag that opens a file for direct writes; 0 where the platform has none.
    public static var openFlag: Int32 { Int32(ferry_o_direct) }
}

extension OutputFile {
    /// Creates or truncates a file, written around the page cache when asked and the filesystem allows it.
    ///
    /// `direct` takes effect with `writesInBackground`; reads see the same bytes.
    public convenience init(
        path: String, exclusive: Bool = false, truncate: Bool = true, bufferSize: Int? = nil, writesInBackground: Bool, direct: Bool
    ) throws {
        try self.init(
            path: path, exclusive: exclusive, truncate: truncate, bufferSize: bufferSize, writesInBackground: writesInBackground,
            directFlag: direct ? DirectIO.openFlag : 0)
    }
}
