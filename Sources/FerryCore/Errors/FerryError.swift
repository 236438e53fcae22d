import Foundation

/// The shape every Ferry module's error type shares.
///
/// Each module has exactly one error type (`CoreError`, `RecordError`, `BundleError`, …) with a `Code`, a message that
/// says what went wrong and how to fix it, and the underlying cause. The command-line tool only needs this protocol
/// to print an error and choose the exit code.
public protocol FerryError: Error, CustomStringConvertible {
    /// The exit class of this error.
    var kind: FailureKind { get }
    /// A stable, machine-readable name for the error, such as `bundle.checksum-mismatch`.
    var codeName: String { get }
    /// What went wrong, where, and how to fix it.
    var message: String { get }
    /// The error that caused this one, if any.
    var cause: (any Error)? { get }
}

/// A library's error whose own description says nothing useful (a placeholder that hides its details), given the text
/// a Ferry error says it with as a cause; the module that uses the library conforms it.
public protocol ExplainedError: Error {
    /// What happened, in a few words.
    var explanation: String { get }
}

extension FerryError {
    /// The message followed by its cause, on one line; a cause the message already says is left out, and so is the
    /// statement an SQLite error came from (`--verbose` shows it, through ``detailedDescription()``).
    public var description: String {
        guard let cause else { return message }
        let said = Self.brief(Self.describe(cause))
        if message.lowercased().contains(said.lowercased()) { return message }
        return "\(message) (cause: \(said))"
    }

    /// A multi-line rendering with the code and the chain of causes, for `--verbose` output.
    public func detailedDescription() -> String {
        var lines = ["\(codeName): \(message)"]
        var next = cause
        var depth = 1
        while let current = next, depth < 16 {
            let indent = String(repeating: "  ", count: depth - 1)
            if let ferry = current as? any FerryError {
                lines.append("\(indent)└─ cause: \(ferry.codeName): \(ferry.message)")
                next = ferry.cause
            } else {
                lines.append("\(indent)└─ cause: \(Self.describe(current))")
                next = nil
            }
            depth += 1
        }
        return lines.joined(separator: "\n")
    }

    /// A cause's text without the SQL statement GRDB appends to SQLite errors (`… - while executing `SELECT …``).
    private static func brief(_ text: String) -> String {
        guard let statement = text.range(of: " - while executing `") else { return text }
        return String(text[..<statement.lowerBound])
    }

    private static func describe(_ error: any Error) -> String {
        if let ferry = error as? any FerryError { return ferry.description }
        if let explained = error as? any ExplainedError { return explained.explanation }
        return String(describing: error)
    }
}
