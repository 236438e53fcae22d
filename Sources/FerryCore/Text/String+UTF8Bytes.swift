extension String {
    /// Calls `body` with the string's UTF-8 bytes: in place for a native string, without the copy `withUTF8` needs.
    ///
    /// `withUTF8` is mutating (a bridged string may have to be made contiguous first), so calling it on a value takes a
    /// `var` copy, which is a retain and a release of the string's storage; on the per-field paths of a copy (JSON
    /// writing, binding, validation) those were a tenth of the reference counting. Strings Ferry makes are native and
    /// take the in-place path; any other is copied as before.
    @inlinable
    package func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return try copy.withUTF8(body)
    }
}
