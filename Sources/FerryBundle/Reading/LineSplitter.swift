#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Splits a stream of chunks into lines, keeping at most one partial line between chunks.
struct LineSplitter {
    private var partial: [UInt8] = []
    private let maxLineLength: Int
    /// Lines delivered so far.
    private(set) var lineCount = 0

    init(maxLineLength: Int = 64 << 20) { self.maxLineLength = maxLineLength }

    /// Whether bytes after the last newline are waiting for the rest of their line.
    var hasPartialLine: Bool { !partial.isEmpty }

    /// Feeds a chunk; calls `body` with each completed line (without its newline).
    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, Int) throws -> Void) throws {
        var start = 0
        while start < chunk.count {
            guard let base = chunk.baseAddress, let found = memchr(base + start, 0x0A, chunk.count - start) else {
                partial.append(contentsOf: chunk[start...])
                guard partial.count <= maxLineLength else {
                    throw BundleError(.invalidRecord, "line \(lineCount + 1) is longer than \(maxLineLength) bytes")
                }
                return
            }
            let newline = base.distance(to: UnsafeRawPointer(found))
            lineCount += 1
            if partial.isEmpty {
                try body(UnsafeRawBufferPointer(rebasing: chunk[start..<newline]), lineCount)
            } else {
                partial.append(contentsOf: chunk[start..<newline])
                try partial.withUnsafeBytes { try body($0, lineCount) }
                partial.removeAll(keepingCapacity: true)
            }
            start = newline + 1
        }
    }

    /// Ends the stream; bundle NDJSON files end with a newline, so leftover bytes are an error.
    func finish(file: String) throws {
        guard !hasPartialLine else {
            throw BundleError(.invalidRecord, "\(file): the last line has no newline (the file is truncated)")
        }
    }
}
