import FerryCore
import FerryJSON

/// The shapes of the record lines seen recently (``RecordLineShape``), most recently used first: how `ferry pack`
/// prepares most lines of a file written by one program without transcoding them.
///
/// ```swift
/// var shapes = RecordLineShapes(validator: validator)
/// if let prepared = shapes.prepare(line, into: &json, references: &references) { /* json holds the canonical form */ }
/// else { /* the full path; then, if it accepted the line: */ shapes.learn(line, from: model, transcoder: &transcoder) }
/// ```
package struct RecordLineShapes {
    /// A line prepared through a shape: what the full path would have found.
    package struct Prepared {
        /// The record type (the shape's).
        package var recordType: String
        /// The zone (the shape's).
        package var zoneID: ZoneID
        /// The record's identity key, from its zone and name.
        package var key: RecordKey
        /// The record's layout (the shape's).
        package var layout: RecordSchema.Layout
    }

    /// What the full path made of a line, for learning its shape.
    package struct Model {
        var canonical: [UInt8]
        var key: RecordKey
        var references: [(target: RecordKey, deleteSelf: Bool)]
        var recordBytes: Int
        var layout: RecordSchema.Layout
        var recordType: String
        var zoneID: ZoneID

        /// The canonical bytes, key, references and size the full path found for a line of this type, zone and layout.
        package init(
            canonical: [UInt8], key: RecordKey, references: [(target: RecordKey, deleteSelf: Bool)], recordBytes: Int,
            layout: RecordSchema.Layout, recordType: String, zoneID: ZoneID
        ) {
            (self.canonical, self.key, self.references, self.recordBytes) = (canonical, key, references, recordBytes)
            (self.layout, self.recordType, self.zoneID) = (layout, recordType, zoneID)
        }
    }

    private let validator: RecordValidator
    /// The shapes, most recently used first; ``shapes`` holds them.
    ///
    /// Unretained: a shape taken out of an array to prepare a line was retained and released around the call, and on
    /// the workers those two atomic operations, each waiting for the line's writes before it, were a tenth of the time.
    private var order: [Unmanaged<RecordLineShape>] = []
    private var shapes: [RecordLineShape] = []
    private var values: [RecordLineShape.Value] = []
    /// Lines still to learn from: learning costs a few lines' work, and a file whose lines share no shape should not
    /// pay it on every line.
    private var learningsLeft: Int
    private static let maxShapes = 8

    /// Shapes checked against `validator`'s rules, learned from at most `learnings` lines.
    package init(validator: RecordValidator, learnings: Int = 24) {
        self.validator = validator
        learningsLeft = learnings
    }

    /// Prepares a line of a known shape, appending its canonical form to `json` and its references' targets (in
    /// canonical field order, each with whether it is DELETE_SELF) to `references`; `nil` (and both as they were) if
    /// it has none, or a value needs the full path.
    package mutating func prepare(
        _ line: UnsafeRawBufferPointer, into json: inout JSONWriter, references: inout [(target: RecordKey, deleteSelf: Bool)]
    ) -> Prepared? {
        // Through the buffer: taking each shape out of the array, and swapping two, retained and released them, for
        // every line (types that alternate line by line swap on most lines).
        let validator = self.validator
        return order.withUnsafeMutableBufferPointer { order in
            for index in order.indices {
                let prepared = order[index]._withUnsafeGuaranteedRef { shape -> Prepared? in
                    guard let key = shape.prepare(line, into: &json, references: &references, values: &values, validator: validator)
                    else { return nil }
                    return Prepared(recordType: shape.recordType, zoneID: shape.zoneID, key: key, layout: shape.layout)
                }
                guard let prepared else { continue }
                if index > 0 { order.swapAt(index, index - 1) }
                return prepared
            }
            return nil
        }
    }

    /// Learns the shape of a line the full path prepared (see ``RecordLineShape``), if it has one worth keeping.
    package mutating func learn(_ line: UnsafeRawBufferPointer, from model: Model, transcoder: inout CloudKitJSONTranscoder) {
        guard learningsLeft > 0 else { return }
        learningsLeft -= 1
        // Lists are literals of a record's first shape; a second line of the same type, zone and layout that no shape
        // took differs in more than those values, most likely its lists, which its shape then takes apart.
        let known = shapes.contains { $0.recordType == model.recordType && $0.zoneID == model.zoneID && $0.layout == model.layout }
        guard
            let shape = RecordLineShape.learned(
                from: line, model: model, validator: validator, transcoder: &transcoder, listElements: known)
        else { return }
        if let last = order.last, shapes.count == Self.maxShapes {
            // The least recently used goes: out of the order first, then out of the array that holds it.
            order.removeLast()
            shapes.removeAll { $0 === last.takeUnretainedValue() }
        }
        shapes.append(shape)
        order.insert(Unmanaged.passUnretained(shape), at: 0)
    }
}
