#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sets a UTF-8 locale once per process before libarchive handles non-ASCII names.
///
/// libarchive 3.6.2 converts pathnames through the C locale and crashes (SIGSEGV in `strlen`) on non-ASCII names
/// under the default "C" locale (engineering.md §2.4).
enum ArchiveLocale {
    private static let setUp: Bool = {
        if setlocale(LC_CTYPE, "C.UTF-8") == nil { _ = setlocale(LC_CTYPE, "en_US.UTF-8") }
        return true
    }()

    /// Makes sure the locale is set; cheap after the first call.
    static func ensureUTF8() { _ = setUp }
}
