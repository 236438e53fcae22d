import FerryCore
import FerryJSON

/// The shape of a record line: its bytes with the values that differ from record to record taken out, and its
/// canonical form with the same values taken out.
///
/// Most files are written by one program, so the lines of one record type differ only in their values: the record
/// name, the scalar field values, the targets of references. A line of a known shape is prepared by comparing the
/// bytes between its values with the shape's, checking each value, and putting the values into the shape's canonical
/// form, instead of transcoding it and scanning the result (``CloudKitJSONTranscoder``, ``CanonicalRecordScanner``).
/// Shapes are learned from lines those two accepted (``learned(from:model:validator:transcoder:)``),
/// and a shape is kept only if it gives its own line the same bytes, key and references as they did.
///
/// The values a shape takes out are those whose bytes change nothing but themselves: the record name, `STRING`,
/// `INT64`, `TIMESTAMP` and `DOUBLE` values with their type tag, a `REFERENCE` value's record name, the system fields'
/// strings and timestamps (the change tag, `created` and `modified`), and, in the second shape learned for a record
/// type, zone and layout, the elements of lists of those scalars (the list's length is the shape's; the first shape
/// keeps its lists as literals, cheaper where every record holds the same list). Everything else (keys, tags, zones,
/// actions, other lists, assets, whitespace) must be byte for byte the model line's.
/// A value that needs more than copying or a number's canonical rewrite (escapes, a name CloudKit refuses, a record
/// over the size limit) declines the line, which then takes the full path that names the problem.
///
/// A class, not a struct: the shapes of a cache are looked at for every line, and a copy of a dozen arrays costs a
/// dozen reference counts.
final class RecordLineShape {
    /// What a value taken out of the line is.
    enum Slot: Equatable {
        case recordName
        case string
        /// A system field's string (the change tag, a stamp's user or device), which the record size does not count.
        case systemString
        case integer
        case double
        /// A reference's target name, with whether the reference is DELETE_SELF.
        case referenceName(deleteSelf: Bool)

        var isReferenceName: Bool { if case .referenceName = self { true } else { false } }
    }

    /// A value as read from a line: where it is, and a number's value when its canonical form is not its bytes.
    struct Value {
        var range: Range<Int>
        var rewritten: Rewritten = .none

        enum Rewritten {
            case none
            case integer(Int64)
            case double(Double)
        }
    }

    /// The line's bytes between its values (one more than ``slots``), all in one array.
    let literals: [UInt8]
    let literalRanges: [Range<Int>]
    let slots: [Slot]
    /// The canonical form's bytes between the values, and which value goes after each of them but the last.
    let outputLiterals: [UInt8]
    let outputRanges: [Range<Int>]
    let outputOrder: [Int]
    /// The slots of reference names, in canonical order (the order of the record's references).
    let referenceOrder: [Int]
    let recordNameSlot: Int
    /// What the record counts toward the size limit besides its string values and reference names.
    let baseBytes: Int
    let recordType: String
    let zoneID: ZoneID
    let seed: RecordKey.Seed
    let layout: RecordSchema.Layout

    /// A shape made of its parts (see ``learned(from:model:validator:transcoder:)``).
    init(
        literals: [UInt8], literalRanges: [Range<Int>], slots: [Slot], outputLiterals: [UInt8], outputRanges: [Range<Int>], outputOrder: [Int],
        referenceOrder: [Int], recordNameSlot: Int, baseBytes: Int, model: Model
    ) {
        self.literals = literals
        self.literalRanges = literalRanges
        self.slots = slots
        self.outputLiterals = outputLiterals
        self.outputRanges = outputRanges
        self.outputOrder = outputOrder
        self.referenceOrder = referenceOrder
        self.recordNameSlot = recordNameSlot
        self.baseBytes = baseBytes
        recordType = model.recordType
        zoneID = model.zoneID
        seed = RecordKey.Seed(model.zoneID)
        layout = model.layout
    }

    /// Prepares a line of this shape, appending its canonical form to `json` and its references' targets (in
    /// canonical field order, each with whether it is DELETE_SELF) to `references`.
    /// - Parameter values: scratch space, reused from line to line.
    /// - Returns: the record's key; `nil` (with `json` and `references` as they were) when the line is not of this
    ///   shape or a value needs the full path.
    func prepare(
        _ line: UnsafeRawBufferPointer, into json: inout JSONWriter, references: inout [(target: RecordKey, deleteSelf: Bool)],
        values: inout [Value], validator: RecordValidator
    ) -> RecordKey? {
        guard read(line, into: &values), let size = recordBytes(line, values, validator: validator),
            size <= validator.limits.maxRecordBytes
        else { return nil }
        let name = UnsafeRawBufferPointer(rebasing: line[values[recordNameSlot].range])
        let referencesBefore = references.count
        for slot in referenceOrder {
            guard case .referenceName(let deleteSelf) = slots[slot] else {
                references.removeSubrange(referencesBefore...)
                return nil
            }
            references.append((seed.key(recordName: UnsafeRawBufferPointer(rebasing: line[values[slot].range])), deleteSelf))
        }
        outputLiterals.withUnsafeBytes { literals in
            for (index, range) in outputRanges.enumerated() {
                json.raw(UnsafeRawBufferPointer(rebasing: literals[range]))
                guard index < outputOrder.count else { break }
                let value = values[outputOrder[index]]
                switch value.rewritten {
                case .none: json.raw(UnsafeRawBufferPointer(rebasing: line[value.range]))
                case .integer(let number): json.integer(number)
                case .double(let number): json.double(number)
                }
            }
        }
        return seed.key(recordName: name)
    }

    /// Reads the values of a line of this shape; `false` if the line is not of it or a value needs the full path.
    private func read(_ line: UnsafeRawBufferPointer, into values: inout [Value]) -> Bool {
        values.removeAll(keepingCapacity: true)
        var offset = 0
        return literals.withUnsafeBytes { literals in
            for (index, slot) in slots.enumerated() {
                guard Self.matches(line, at: offset, UnsafeRawBufferPointer(rebasing: literals[literalRanges[index]])) else { return false }
                offset += literalRanges[index].count
                let value: Value?
                switch slot {
                case .recordName, .string, .systemString, .referenceName: value = Self.plainString(line, from: offset)
                case .integer: value = Self.integer(line, from: offset)
                case .double: value = Self.double(line, from: offset)
                }
                guard let value else { return false }
                values.append(value)
                offset = value.range.upperBound
            }
            let last = UnsafeRawBufferPointer(rebasing: literals[literalRanges[slots.count]])
            return offset + last.count == line.count && Self.matches(line, at: offset, last)
        }
    }

    /// The record's size for the limit, or `nil` when a name is one CloudKit refuses.
    private func recordBytes(_ line: UnsafeRawBufferPointer, _ values: [Value], validator: RecordValidator) -> Int? {
        var size = baseBytes
        for (slot, value) in zip(slots, values) {
            switch slot {
            case .recordName, .referenceName:
                guard validator.recordNameProblem(utf8: UnsafeRawBufferPointer(rebasing: line[value.range])) == nil else { return nil }
                if slot.isReferenceName { size += value.range.count }
            case .string:
                size += value.range.count
            case .systemString, .integer, .double:
                break
            }
        }
        return size
    }

    /// Whether the line holds `literal` at `offset` (``FerryCore/Swift/UnsafeRawBufferPointer/hasSameBytes(as:)``).
    private static func matches(_ line: UnsafeRawBufferPointer, at offset: Int, _ literal: UnsafeRawBufferPointer) -> Bool {
        line.count - offset >= literal.count && UnsafeRawBufferPointer(rebasing: line[offset..<(offset + literal.count)]).hasSameBytes(as: literal)
    }

    /// A string's content up to its closing quote, when it is its own canonical form
    /// (``JSONStringBytes/plainContentEnd(_:from:)``).
    static func plainString(_ line: UnsafeRawBufferPointer, from start: Int) -> Value? {
        JSONStringBytes.plainContentEnd(line, from: start).map { Value(range: start..<$0) }
    }

    /// The bytes of a JSON number token.
    private static func numberEnd(_ line: UnsafeRawBufferPointer, from start: Int) -> Int {
        var offset = start
        while offset < line.count {
            switch line[offset] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"),
                UInt8(ascii: "E"):
                offset += 1
            default:
                return offset
            }
        }
        return offset
    }

    /// An `INT64` or `TIMESTAMP` value, as the decoder reads it (``CloudKitJSONDecoder``'s whole-number rule).
    static func integer(_ line: UnsafeRawBufferPointer, from start: Int) -> Value? {
        // The digits first, in one pass (every value of a feed's timestamps is digits alone); the rest of a number, if
        // any, after them.
        var digitsEnd = start
        while digitsEnd < line.count, line[digitsEnd] &- UInt8(ascii: "0") <= 9 { digitsEnd += 1 }
        let end = numberEnd(line, from: digitsEnd)
        guard end > start else { return nil }
        // Digits without a sign or a leading zero are their own canonical form (18 of them always fit).
        if end == digitsEnd, end - start <= 18, line[start] != UInt8(ascii: "0") || end - start == 1 {
            return Value(range: start..<end)
        }
        switch number(UnsafeRawBufferPointer(rebasing: line[start..<end])) {
        case .integer(let value)?:
            return Value(range: start..<end, rewritten: .integer(value))
        case .double(let value)?:
            guard value.rounded() == value, let exact = Int64(exactly: value) else { return nil }
            return Value(range: start..<end, rewritten: .integer(exact))
        default:
            return nil
        }
    }

    /// A `DOUBLE` value, rewritten in its shortest round-trip form as the transcoder writes it.
    static func double(_ line: UnsafeRawBufferPointer, from start: Int) -> Value? {
        let end = numberEnd(line, from: start)
        guard end > start else { return nil }
        let value: Double
        switch number(UnsafeRawBufferPointer(rebasing: line[start..<end])) {
        case .integer(let number)?: value = Double(number)
        case .unsigned(let number)?: value = Double(number)
        case .double(let number)?: value = number
        case nil: return nil
        }
        guard value.isFinite else { return nil }
        return Value(range: start..<end, rewritten: .double(value))
    }

    /// A whole number token read by the scanner the decoder and the transcoder use; `nil` if it is not one.
    private static func number(_ token: UnsafeRawBufferPointer) -> JSONScanner.Number? {
        var scanner = JSONScanner(token)
        guard let number = try? scanner.number(), (try? scanner.finish()) != nil else { return nil }
        return number
    }
}
