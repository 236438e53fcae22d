import FerryCore
import FerryJSON

/// Dumps a store's objects as JSON Lines.
///
/// Objects are read in one consistent snapshot on the calling thread, encoded on worker threads in batches, and
/// written in order. Memory stays bounded by the batches in flight.
public enum StoreDump {
    /// What a dump wrote.
    public struct Summary: Sendable {
        /// Objects per concrete entity.
        public var counts: [String: Int] = [:]
        /// All objects.
        public var total = 0
        /// Problems reported on objects (missing external files, mistyped values, …).
        public var problems = 0
    }

    /// How much a batch handed to an encoder thread holds: objects plus their to-many references (an object with a
    /// hundred thousand references fills a batch alone, so memory stays bounded).
    static let batchWeight = 2048

    /// Dumps every object (of one entity, with its sub-entities, when `entity` is given).
    /// - Parameters:
    ///   - workers: encoder threads (1 encodes on the calling thread).
    ///   - messageType: a `"message_type"` member for every line (the CLI's `--json`).
    ///   - write: receives the encoded lines, in order, on the calling thread.
    ///   - progress: called with the number of objects read so far, every batch.
    public static func run(
        _ store: CoreDataStore, entity: String? = nil, workers: Int = OrderedParallelMap.defaultWorkers, messageType: String? = nil,
        write: @escaping ([UInt8]) throws -> Void, progress: (Int) -> Void = { _ in }
    ) throws -> Summary {
        var summary = Summary()
        let pipeline = OrderedPipeline<[ManagedObject], [UInt8]>(
            workers: workers,
            transform: { batch in
                var encoder = ObjectJSONEncoder()
                var writer = JSONWriter(capacity: batch.count * 1024)
                for object in batch {
                    encoder.encode(object, messageType: messageType, into: &writer)
                    writer.byte(UInt8(ascii: "\n"))
                }
                return writer.bytes
            },
            consume: write)
        var batch: [ManagedObject] = []
        var weight = 0
        do {
            try store.forEachObject(entity: entity) { object in
                summary.counts[object.entity, default: 0] += 1
                summary.total += 1
                summary.problems += object.problems.count
                batch.append(object)
                weight += 1
                for relationship in object.relationships {
                    if case .toMany(let targets) = relationship.value { weight += targets.count }
                }
                if weight >= batchWeight {
                    try pipeline.submit(batch)
                    batch.removeAll(keepingCapacity: true)
                    weight = 0
                    progress(summary.total)
                }
            }
            if !batch.isEmpty { try pipeline.submit(batch) }
            try pipeline.drain()
        } catch {
            pipeline.cancel()
            throw error
        }
        return summary
    }
}
