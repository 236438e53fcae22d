import CZstd
import FerryCore

/// What libzstd's status codes say.
public enum ZstdStatus {
    /// libzstd's name for an error code, for messages.
    public static func describe(_ code: Int) -> String {
        ZSTD_getErrorName(code).map { String(cString: $0) } ?? "error \(code)"
    }
}
