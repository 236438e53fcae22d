import CArchive

/// Builds a ``BundleError`` from libarchive's last error on a handle.
enum ArchiveStatus {
    /// The message libarchive recorded for the handle.
    static func message(_ handle: OpaquePointer?) -> String {
        guard let handle, let text = archive_error_string(handle) else { return "unknown libarchive error" }
        return String(cString: text)
    }
}
