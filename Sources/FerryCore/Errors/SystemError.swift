#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An operating-system error number with its message, used as the cause of file errors.
public struct SystemError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The `errno` value.
    public let errno: Int32

    /// Creates an error for an `errno` value.
    public init(errno: Int32) { self.errno = errno }

    /// The current thread's `errno`.
    public static var current: SystemError { SystemError(errno: Glibc.errno) }

    public var description: String {
        guard let text = strerror(errno) else { return "errno \(errno)" }
        return String(cString: text)
    }

    /// Turns this error into a ``CoreError`` with the right code for a file operation.
    /// - Parameters:
    ///   - operation: what was being done, such as `open`.
    ///   - path: the file concerned.
    ///   - writing: whether the file was being written.
    public func coreError(_ operation: String, path: String, writing: Bool = false) -> CoreError {
        switch errno {
        case ENOENT, ENOTDIR:
            CoreError(.fileNotFound, "\(path): no such file or directory; check the path", cause: self)
        case EACCES, EPERM:
            CoreError(.permissionDenied, "\(path): permission denied (\(operation))", cause: self)
        case ENOSPC, EDQUOT:
            CoreError(
                .writeFailed,
                "\(path): \(operation) failed: \(description); free some space there, or write elsewhere (--temp-dir for scratch files)",
                cause: self)
        default:
            CoreError(writing ? .writeFailed : .readFailed, "\(path): \(operation) failed: \(description)", cause: self)
        }
    }
}
