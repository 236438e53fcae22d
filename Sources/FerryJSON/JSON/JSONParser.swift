import FerryCore

/// Why a document is not valid JSON, and where.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The byte offset of the problem within the parsed buffer.
    public var offset: Int
    /// What was expected or found.
    public var reason: String

    public var description: String { "at byte \(offset): \(reason)" }
}

/// Parses whole JSON documents into ``JSONValue`` trees, with ``JSONScanner`` as the lexer.
public enum JSONParser {
    /// The deepest nesting accepted.
    public static let defaultMaxDepth = 512

    /// Parses one complete JSON document; only whitespace may follow it.
    /// - Throws: ``JSONSyntaxError`` with the byte offset of the first problem.
    package static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth) throws(JSONSyntaxError) -> JSONValue {
        var scanner = JSONScanner(bytes)
        let value = try scanner.value(maxDepth: maxDepth)
        try scanner.finish()
        return value
    }

    /// Parses one complete JSON document from an array of bytes.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONSyntaxError) -> JSONValue {
        do {
            return try bytes.withUnsafeBytes { buffer in try parse(buffer, maxDepth: maxDepth) }
        } catch let error as JSONSyntaxError {
            throw error
        } catch {
            throw JSONSyntaxError(offset: 0, reason: "\(error)")
        }
    }

    /// Parses one complete JSON document from a string.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }
}
