import FerryCore
import FerryJSON
import FerryTextInput

/// Reads records and deletions from a file of CloudKit record dictionaries, compressed or not.
///
/// The file is NDJSON, one record per line, or a JSON document of them (an array, a CloudKit response's `records`,
/// records one after another: see ``LineReader/nextRecordText()``), gzip- or Zstandard-compressed or not. A
/// document's records are handed over as lines are.
///
/// A bad line never stops the read: it is handed over as ``Item/invalid(_:_:text:)`` with its position, so callers
/// can reject it and go on (a document broken between its records does stop it). Blank lines are skipped, and so is
/// a UTF-8 byte order mark that starts the file. Memory is bounded by the longest line allowed.
public struct RecordFileReader {
    /// One line's outcome.
    public enum Item: Sendable {
        /// A decoded record or deletion.
        case change(RecordChange, LineReader.Position)
        /// A line that is not a valid record, with the reason and (when it is text of a reasonable size) the line.
        case invalid(RecordError, LineReader.Position, text: String?)
        /// A CloudKit `records/modify` request: an item for each operation, at the line and byte where it starts.
        case operations([Item])
    }

    /// One non-blank line, for callers that handle some lines without the full decoder.
    public struct Line: ~Copyable {
        /// The line's bytes, without its newline (`nil` for a line over the length limit); valid during the call only.
        package let bytes: UnsafeRawBufferPointer?
        /// Where the line is.
        public let position: LineReader.Position
        fileprivate let length: Int
        fileprivate let decoder: CloudKitJSONDecoder
        fileprivate let maxLineLength: Int

        /// The line decoded the full way.
        public func decoded() -> Item {
            guard let bytes else {
                return .invalid(
                    RecordError(.invalidRecord, at: "", "line of \(length) bytes is longer than the \(maxLineLength)-byte limit"), position,
                    text: nil)
            }
            do throws(RecordError) {
                switch try decoder.decodeContents(line: bytes) {
                case .change(let change): return .change(change, position)
                case .request(let operations): return .operations(operations.map { item(of: $0, in: bytes) })
                }
            } catch {
                return .invalid(error, position, text: Self.text(bytes))
            }
        }

        /// An operation of a request as an item, at its own line and byte.
        private func item(of operation: CloudKitJSONDecoder.RequestOperation, in bytes: UnsafeRawBufferPointer) -> Item {
            let place = position.advanced(over: UnsafeRawBufferPointer(rebasing: bytes[..<operation.range.lowerBound]))
            switch operation.outcome {
            case .success(let change): return .change(change, place)
            case .failure(let error): return .invalid(error, place, text: Self.text(UnsafeRawBufferPointer(rebasing: bytes[operation.range])))
            }
        }

        /// Text to show with a rejection: the bytes, when they are UTF-8 of a reasonable size.
        private static func text(_ bytes: UnsafeRawBufferPointer) -> String? {
            bytes.count <= 1 << 20 ? String(validating: bytes, as: UTF8.self) : nil
        }
    }

    /// The file.
    public let path: String
    private let decoder: CloudKitJSONDecoder
    private let maxLineLength: Int

    /// Prepares to read a file.
    /// - Parameters:
    ///   - path: the NDJSON file.
    ///   - decoder: the decoder (with an asset resolver for `path`-form assets).
    ///   - maxLineLength: the longest line accepted; longer lines are reported invalid and skipped.
    public init(path: String, decoder: CloudKitJSONDecoder, maxLineLength: Int = 64 << 20) {
        self.path = path
        self.decoder = decoder
        self.maxLineLength = maxLineLength
    }

    /// Calls `body` for every non-blank line, in order.
    /// - Throws: ``CoreError`` when the file cannot be read, ``RecordError`` when it is not text (compressed, an
    ///   archive, a database: ``RecordFileSignature``); whatever `body` throws.
    public func forEach(_ body: (Item) throws -> Void) throws {
        try forEach(workers: 1, transform: { $0 }, consume: body)
    }

    /// Decodes lines on `workers` threads, applies `transform` to each outcome on those threads too, and passes the
    /// results to `consume` in input order on the calling thread.
    ///
    /// Lines travel in batches of about a megabyte, and only a few batches are in flight, so memory stays bounded.
    /// - Throws: ``CoreError`` when the file cannot be read, ``RecordError`` when it is not text; whatever `consume`
    ///   throws.
    public func forEach<Output: Sendable>(
        workers: Int, transform: @escaping @Sendable (consuming Item) -> Output, consume: (Output) throws -> Void
    ) throws {
        try forEachBatch(
            workers: workers, context: {},
            transform: { lines, _ in
                var outputs: [Output] = []
                outputs.reserveCapacity(lines.count)
                lines.forEach { outputs.append(transform($0.decoded())) }
                return outputs
            },
            consume: { outputs in
                for output in outputs { try consume(output) }
            })
    }

    /// Hands batches of lines, undecoded, to `transform` on `workers` threads, with a context made by `context` (on a
    /// worker thread) and kept for later batches, and passes what it makes of each batch to `consume` in input order
    /// on the calling thread.
    ///
    /// One batch at a time has a context, on whichever worker transforms that batch, so what it learns (line shapes,
    /// say) is learned once, not once a batch. A batch is made whole on one thread and handed over whole: what its lines
    /// share (one buffer for all their canonical forms, say) crosses threads once.
    public func forEachBatch<Batch: Sendable, Context>(
        workers: Int, context: @escaping @Sendable () -> Context, transform: @escaping @Sendable (Lines, inout Context) -> Batch,
        consume: (borrowing Batch) throws -> Void
    ) throws {
        let reader = try LineReader(path: path, maxLineLength: maxLineLength, skippingByteOrderMark: true, decompressing: true)
        if let problem = RecordFileSignature.problem(prefix: try reader.prefix(RecordFileSignature.length), path: path) {
            throw RecordError(.invalidJSON, at: "", problem)
        }
        let decoder = self.decoder
        let limit = maxLineLength
        // Freeing a batch of decoded records costs about as much as consuming it, and the in-order consumer is the
        // thread the workers wait for: the batch's last reference goes to another thread, a few batches at most.
        let spent = BackgroundRelease(limit: 4)
        let contexts = ReusePool<Context>()
        // A deeper window than one batch per worker: batches take uneven time, and with few in flight the workers
        // waited on the reader and the reader on the oldest batch.
        try OrderedParallelMap.run(
            workers: workers, window: workers * 6,
            produce: { try LineBatch.read(from: reader) },
            transform: { batch in
                var state = contexts.take(orMake: context)
                let output = transform(Lines(batch: batch, decoder: decoder, maxLineLength: limit), &state)
                contexts.give(state)
                return output
            },
            consume: { (output: consuming Batch) in
                try consume(output)
                spent.release(output)
            })
    }

    /// The lines of one batch, lent to a transform.
    public struct Lines: Sendable {
        fileprivate let batch: LineBatch
        fileprivate let decoder: CloudKitJSONDecoder
        fileprivate let maxLineLength: Int

        /// How many lines there are.
        public var count: Int { batch.entries.count }

        /// How many bytes the lines hold, newlines not counted.
        public var byteCount: Int { batch.bytes.count }

        /// Calls `body` with each line, in order.
        public func forEach(_ body: (borrowing Line) -> Void) {
            batch.bytes.withUnsafeBytes { buffer in
                for entry in batch.entries {
                    switch entry {
                    case .tooLong(let position, let length):
                        body(Line(bytes: nil, position: position, length: length, decoder: decoder, maxLineLength: maxLineLength))
                    case .line(let range, let position):
                        let bytes = UnsafeRawBufferPointer(rebasing: buffer[range])
                        body(Line(bytes: bytes, position: position, length: bytes.count, decoder: decoder, maxLineLength: maxLineLength))
                    }
                }
            }
        }
    }
}

/// Lines copied out of the reader's buffer, to be decoded on another thread.
private struct LineBatch: Sendable {
    enum Entry: Sendable {
        case line(Range<Int>, LineReader.Position)
        case tooLong(LineReader.Position, Int)
    }

    var bytes: [UInt8] = []
    var entries: [Entry] = []

    /// Up to about 128 KiB (512 lines), or `nil` at the end of the file: small batches keep few decoded records in
    /// flight while the window stays deep.
    static func read(from reader: LineReader) throws -> LineBatch? {
        var batch = LineBatch()
        batch.bytes.reserveCapacity(128 << 10)
        while batch.bytes.count < 128 << 10, batch.entries.count < 512, let line = try reader.nextRecordText() {
            switch line {
            case .bytes(let bytes, let position):
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                let start = batch.bytes.count
                batch.bytes.append(contentsOf: bytes)
                batch.entries.append(.line(start..<batch.bytes.count, position))
            case .tooLong(let position, let length):
                batch.entries.append(.tooLong(position, length))
            }
        }
        return batch.entries.isEmpty ? nil : batch
    }
}
