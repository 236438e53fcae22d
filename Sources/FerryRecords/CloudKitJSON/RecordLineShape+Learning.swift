import FerryCore
import FerryJSON

/// Learning a shape from a line the full path prepared.
///
/// The line is walked to find its values; a copy of it with a distinct sentinel in place of each value is transcoded,
/// and the sentinels are found in the result: what lies between them is the shape's canonical form, written by the
/// transcoder itself. The shape is kept only if preparing the model line through it gives back the bytes, key and
/// references the full path gave.
extension RecordLineShape {
    /// What the full path made of the model line.
    typealias Model = RecordLineShapes.Model

    /// A value found in the model line: where its bytes are (a string's without its quotes).
    private struct Found {
        var range: Range<Int>
        var slot: Slot
    }

    /// The shape of `line`, or `nil` when it has none worth keeping (no record name to take out, a value the shape
    /// cannot carry, sentinels the transcoder does not write back once each, or a shape that does not give the model
    /// back).
    /// - Parameter listElements: whether the elements of lists are values of the shape, or its lists literals (which
    ///   cost nothing to compare where every record holds the same list).
    static func learned(
        from line: UnsafeRawBufferPointer, model: Model, validator: RecordValidator, transcoder: inout CloudKitJSONTranscoder,
        listElements: Bool
    ) -> RecordLineShape? {
        guard let found = try? Self.values(in: line, listElements: listElements), found.contains(where: { $0.slot == .recordName }),
            found.filter(\.slot.isReferenceName).count == model.references.count
        else { return nil }
        // The line with a sentinel for each value, and what each sentinel becomes in the canonical form.
        var sentinelLine: [UInt8] = []
        var sentinels: [[UInt8]] = []
        var literals: [UInt8] = []
        var literalRanges: [Range<Int>] = []
        var offset = 0
        for (index, value) in found.enumerated() {
            let literal = line[offset..<value.range.lowerBound]
            literalRanges.append(literals.count..<(literals.count + literal.count))
            literals += literal
            sentinelLine += literal
            let (text, rendered) = Self.sentinel(index, for: value.slot)
            sentinelLine += text
            sentinels.append(rendered)
            offset = value.range.upperBound
        }
        literalRanges.append(literals.count..<(literals.count + line.count - offset))
        literals += line[offset...]
        sentinelLine += line[offset...]

        var json = JSONWriter(capacity: sentinelLine.count + 64)
        guard let transcoded = sentinelLine.withUnsafeBytes({ transcoder.transcode($0, into: &json) }),
            transcoded.recordType == model.recordType, transcoded.zoneID == model.zoneID, transcoded.assets.isEmpty
        else { return nil }
        // Each sentinel once in the canonical form, in some order.
        let output = json.bytes
        var places: [(start: Int, end: Int, slot: Int)] = []
        for (index, rendered) in sentinels.enumerated() {
            let starts = Self.occurrences(of: rendered, in: output)
            guard starts.count == 1, let start = starts.first else { return nil }
            places.append((start, start + rendered.count, index))
        }
        places.sort { $0.start < $1.start }
        var outputLiterals: [UInt8] = []
        var outputRanges: [Range<Int>] = []
        var position = 0
        for place in places {
            guard place.start >= position else { return nil }
            outputRanges.append(outputLiterals.count..<(outputLiterals.count + place.start - position))
            outputLiterals += output[position..<place.start]
            position = place.end
        }
        outputRanges.append(outputLiterals.count..<(outputLiterals.count + output.count - position))
        outputLiterals += output[position...]

        // References come in canonical order: their actions are the model's, taken in that order.
        var slots = found.map(\.slot)
        let referenceOrder = places.map(\.slot).filter { slots[$0].isReferenceName }
        for (slot, reference) in zip(referenceOrder, model.references) { slots[slot] = .referenceName(deleteSelf: reference.deleteSelf) }
        var baseBytes = model.recordBytes
        for value in found {
            switch value.slot {
            case .string, .referenceName: baseBytes -= value.range.count
            case .recordName, .systemString, .integer, .double: break
            }
        }
        guard let recordNameSlot = slots.firstIndex(of: .recordName) else { return nil }
        let shape = RecordLineShape(
            literals: literals, literalRanges: literalRanges, slots: slots, outputLiterals: outputLiterals, outputRanges: outputRanges,
            outputOrder: places.map(\.slot), referenceOrder: referenceOrder, recordNameSlot: recordNameSlot, baseBytes: baseBytes,
            model: model)

        // Kept only if it gives the model back.
        var again = JSONWriter(capacity: model.canonical.count)
        var scratch: [Value] = []
        var references: [(target: RecordKey, deleteSelf: Bool)] = []
        guard let key = shape.prepare(line, into: &again, references: &references, values: &scratch, validator: validator),
            again.bytes == model.canonical, key == model.key, references.count == model.references.count,
            zip(references, model.references).allSatisfy({ $0.target == $1.target && $0.deleteSelf == $1.deleteSelf })
        else { return nil }
        return shape
    }

    /// A sentinel for value `index`: its text in the line, and what the canonical form makes of it.
    ///
    /// Names and strings are plain ASCII that a record name may be; numbers are exact in any form.
    private static func sentinel(_ index: Int, for slot: Slot) -> (text: [UInt8], rendered: [UInt8]) {
        switch slot {
        case .recordName, .string, .systemString, .referenceName:
            let text = Array("Fy7q\(index)zSentinelQ3x".utf8)
            return (text, text)
        case .integer:
            let text = Array(String(3_141_592_653_589_000 + Int64(index)).utf8)
            return (text, text)
        case .double:
            let value = 2_718_281.5 + Double(index)
            var json = JSONWriter()
            json.double(value)
            return (Array(String(value).utf8), json.bytes)
        }
    }

    private static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> [Int] {
        guard !needle.isEmpty, haystack.count >= needle.count else { return [] }
        return (0...(haystack.count - needle.count)).filter { start in haystack[start..<(start + needle.count)].elementsEqual(needle) }
    }

    /// The values of a record line that a shape takes out, in line order.
    private static func values(in line: UnsafeRawBufferPointer, listElements: Bool) throws -> [Found] {
        var scanner = JSONScanner(line)
        guard try scanner.peek() == .object else { return [] }
        try scanner.beginObject()
        var found: [Found] = []
        var first = true
        while let key = try scanner.nextRawKey(&first) {
            switch key {
            case "recordName":
                guard try scanner.peek() == .string, let name = try plainString(&scanner, line) else { return [] }
                found.append(Found(range: name, slot: .recordName))
            case "recordChangeTag":
                if try scanner.peek() == .string, let tag = try plainString(&scanner, line) {
                    found.append(Found(range: tag, slot: .systemString))
                } else {
                    try scanner.skipValue()
                }
            case "created", "modified":
                try stamp(&scanner, line, into: &found)
            case "fields":
                guard try scanner.peek() == .object else { return [] }
                try scanner.beginObject()
                var firstField = true
                while try scanner.nextRawKey(&firstField) != nil {
                    found += try field(&scanner, line, listElements: listElements)
                }
            default:
                try scanner.skipValue()
            }
        }
        try scanner.finish()
        return found
    }

    /// The values of a `created` or `modified` stamp that a shape takes out: its timestamp when it is a number, and
    /// its user's and device's names when they are plain strings.
    private static func stamp(_ scanner: inout JSONScanner, _ line: UnsafeRawBufferPointer, into found: inout [Found]) throws {
        guard try scanner.peek() == .object else {
            try scanner.skipValue()
            return
        }
        try scanner.beginObject()
        var first = true
        while let key = try scanner.nextRawKey(&first) {
            let kind = try scanner.peek()
            let start = scanner.offset
            switch key {
            case "timestamp" where kind == .number:
                try scanner.skipValue()
                found.append(Found(range: start..<scanner.offset, slot: .integer))
            case "userRecordName" where kind == .string, "deviceID" where kind == .string:
                if let name = try plainString(&scanner, line) { found.append(Found(range: name, slot: .systemString)) }
            default:
                try scanner.skipValue()
            }
        }
    }

    /// The values of one field that a shape takes out: its value, or a list's elements (then its type tag, and a
    /// list's length, are literals of the shape).
    private static func field(_ scanner: inout JSONScanner, _ line: UnsafeRawBufferPointer, listElements: Bool) throws -> [Found] {
        guard try scanner.peek() == .object else {
            try scanner.skipValue()
            return []
        }
        try scanner.beginObject()
        var tag: String?
        var value: (range: Range<Int>, kind: JSONScanner.Kind)?
        var referenceName: Range<Int>?
        var elements: [(range: Range<Int>, kind: JSONScanner.Kind)]?
        var first = true
        while let key = try scanner.nextRawKey(&first) {
            switch key {
            case "type":
                tag = try scanner.peek() == .string ? try scanner.string() : nil
                if tag == nil { try scanner.skipValue() }
            case "value":
                let kind = try scanner.peek()
                let start = scanner.offset
                if kind == .object {
                    referenceName = try self.referenceName(&scanner, line)
                } else if kind == .array, listElements {
                    elements = try self.elements(&scanner)
                } else {
                    try scanner.skipValue()
                }
                value = (start..<scanner.offset, kind)
            default:
                try scanner.skipValue()
            }
        }
        guard let tag, let value else { return [] }
        switch (tag, value.kind) {
        case ("STRING", .string):
            return Self.unquoted(value.range, in: line).map { [Found(range: $0, slot: .string)] } ?? []
        case ("INT64", .number), ("TIMESTAMP", .number):
            return [Found(range: value.range, slot: .integer)]
        case ("DOUBLE", .number):
            return [Found(range: value.range, slot: .double)]
        case ("REFERENCE", .object):
            return referenceName.map { [Found(range: $0, slot: .referenceName(deleteSelf: false))] } ?? []
        case ("STRING_LIST", .array):
            // All or none: a list with an element the shape cannot carry stays a literal.
            let strings = (elements ?? []).compactMap { $0.kind == .string ? Self.unquoted($0.range, in: line) : nil }
            return strings.count == elements?.count ? strings.map { Found(range: $0, slot: .string) } : []
        case ("INT64_LIST", .array), ("TIMESTAMP_LIST", .array), ("DOUBLE_LIST", .array):
            let numbers = (elements ?? []).filter { $0.kind == .number }
            let slot: Slot = tag == "DOUBLE_LIST" ? .double : .integer
            return numbers.count == elements?.count ? numbers.map { Found(range: $0.range, slot: slot) } : []
        default:
            return []
        }
    }

    /// The elements of a list (which the scanner has then read), each with its kind; `nil` for a list longer than a
    /// shape takes apart (learning a shape searches its canonical form for each value).
    private static func elements(_ scanner: inout JSONScanner) throws -> [(range: Range<Int>, kind: JSONScanner.Kind)]? {
        try scanner.beginArray()
        var elements: [(range: Range<Int>, kind: JSONScanner.Kind)] = []
        var first = true
        while try scanner.nextElement(&first) {
            let kind = try scanner.peek()
            let start = scanner.offset
            try scanner.skipValue()
            elements.append((start..<scanner.offset, kind))
        }
        return elements.count <= maxListSlots ? elements : nil
    }

    /// The most elements of a list a shape takes out.
    private static let maxListSlots = 64

    /// The record name of a reference object (which the scanner has then read), when it is a plain string.
    private static func referenceName(_ scanner: inout JSONScanner, _ line: UnsafeRawBufferPointer) throws -> Range<Int>? {
        try scanner.beginObject()
        var name: Range<Int>?
        var first = true
        while let key = try scanner.nextRawKey(&first) {
            if key.matches("recordName"), try scanner.peek() == .string {
                name = try plainString(&scanner, line)
            } else {
                try scanner.skipValue()
            }
        }
        return name
    }

    /// Reads a string and returns its content's range when it needs no escapes.
    private static func plainString(_ scanner: inout JSONScanner, _ line: UnsafeRawBufferPointer) throws -> Range<Int>? {
        let start = scanner.offset
        try scanner.skipValue()
        return unquoted(start..<scanner.offset, in: line)
    }

    /// The content of a string token, when it is plain (no escapes, well-formed UTF-8).
    private static func unquoted(_ token: Range<Int>, in line: UnsafeRawBufferPointer) -> Range<Int>? {
        guard token.count >= 2, let value = plainString(line, from: token.lowerBound + 1), value.range.upperBound == token.upperBound - 1
        else { return nil }
        return value.range
    }
}
