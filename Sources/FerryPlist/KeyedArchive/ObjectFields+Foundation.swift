import Foundation

extension ObjectFields {
    /// The object's typed content: by the first class of its chain Ferry knows, else its fields.
    func content(size: inout Int) throws(PlistError) -> ArchivedContent {
        for name in archivedClass.chain {
            if let content = try knownContent(name, size: &size) { return content }
        }
        return .fields(try allFields(size: &size))
    }

    /// The content for a class Ferry knows, or `nil` for any other class.
    private func knownContent(_ name: String, size: inout Int) throws(PlistError) -> ArchivedContent? {
        switch name {
        case "NSArray", "NSMutableArray":
            return .array(try elements("NS.objects", size: &size) ?? [])
        case "NSSet", "NSMutableSet":
            return .set(try elements("NS.objects", size: &size) ?? [])
        case "NSOrderedSet", "NSMutableOrderedSet":
            return .orderedSet(try numberedObjects(size: &size))
        case "NSCountedSet":
            return .countedSet(try countedObjects(size: &size))
        case "NSKnownKeysDictionary1":
            // Core Data's model cache: `values`, and keys in `searchMapping` (an NSKnownKeysMappingStrategy1).
            let values = try value("values", size: &size)?.elements ?? []
            var keys: [ArchivedValue] = []
            if case .object(let mapping)? = try value("searchMapping", size: &size), case .fields(let fields) = mapping.content {
                keys = fields.first { $0.name == "keys" }?.value.elements ?? []
            }
            guard keys.count == values.count else { throw malformed("\(keys.count) keys but \(values.count) values") }
            return .dictionary(zip(keys, values).map { ArchivedEntry(key: $0, value: $1) })
        case "NSDictionary", "NSMutableDictionary":
            let keys = try elements("NS.keys", size: &size) ?? []
            let values = try elements("NS.objects", size: &size) ?? []
            guard keys.count == values.count else { throw malformed("\(keys.count) keys but \(values.count) values") }
            return .dictionary(zip(keys, values).map { ArchivedEntry(key: $0, value: $1) })
        case "NSString", "NSMutableString":
            if let text = try string("NS.string") { return .string(text) }
            if let bytes = try data("NS.bytes") {
                guard let text = String(validating: bytes, as: UTF8.self) else { throw malformed("NS.bytes is not UTF-8") }
                return .string(text)
            }
            throw malformed("no NS.string")
        case "NSAttributedString", "NSMutableAttributedString":
            return try attributedString(size: &size)
        case "NSDate":
            guard let time = try real("NS.time") else { throw malformed("no NS.time") }
            return .date(time)
        case "NSData", "NSMutableData":
            if let bytes = try data("NS.data") { return .data(bytes) }
            guard let bytes = try data("NS.bytes") else { throw malformed("no NS.data") }
            return .data(bytes)
        case "NSUUID":
            guard let bytes = try data("NS.uuidbytes"), bytes.count == 16 else { throw malformed("NS.uuidbytes is not 16 bytes") }
            let uuid = UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                    bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                ))
            return .uuid(uuid)
        case "NSURL":
            guard let relative = try string("NS.relative") else { throw malformed("no NS.relative") }
            let base = try value("NS.base", size: &size)
            return .url(relative: relative, base: base == .null ? nil : base)
        case "NSNull":
            return .null
        case "NSValue", "NSConcreteValue":
            return .value(try nsValue(size: &size))
        case "NSDecimalNumber":
            return .decimal(try decimal())
        case "NSNumber":
            guard let number = try value("NS.number", size: &size) else { return nil }
            return .number(number)
        case "NSIndexSet", "NSMutableIndexSet":
            return .indexSet(try indexSet())
        case "NSIndexPath":
            return .indexPath(try indexPath())
        case "NSTimeZone", "__NSTimeZone", "NSLocalTimeZone":
            guard let zone = try string("NS.name") else { throw malformed("no NS.name") }
            return .timeZone(zone)
        case "NSLocale", "__NSCFLocale", "NSAutoLocale":
            guard let identifier = try string("NS.identifier") else { throw malformed("no NS.identifier") }
            return .locale(identifier)
        case "NSMeasurement":
            guard let amount = try real("NS.value") else { throw malformed("no NS.value") }
            var unitSize = 0
            guard case .object(let unit)? = try value("NS.unit", size: &unitSize) else { throw malformed("no NS.unit") }
            size = try decoder.grow(size, unitSize)
            var symbol = ""
            if case .fields(let fields) = unit.content {
                symbol = fields.first { $0.name == "NS.symbol" }?.value.stringValue ?? ""
            }
            return .measurement(value: amount, unit: symbol)
        default:
            return try cloudKitContent(name, size: &size)
        }
    }

    /// NSOrderedSet's `NS.object.0`, `NS.object.1`, … (not `NS.objects`).
    private func numberedObjects(size: inout Int) throws(PlistError) -> [ArchivedValue] {
        if let objects = try elements("NS.objects", size: &size) { return objects }
        var numbered: [(Int, ArchivedValue)] = []
        for field in try allFields(size: &size) where field.name.hasPrefix("NS.object.") {
            guard let index = Int(field.name.dropFirst("NS.object.".count)) else { continue }
            numbered.append((index, field.value))
        }
        return numbered.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// NSCountedSet's `NS.objectK` and `NS.countK`.
    private func countedObjects(size: inout Int) throws(PlistError) -> [ArchivedCount] {
        let fields = try allFields(size: &size)
        var objects: [Int: ArchivedValue] = [:]
        var counts: [Int: Int64] = [:]
        for field in fields {
            if field.name.hasPrefix("NS.object"), let index = Int(field.name.dropFirst("NS.object".count)) {
                objects[index] = field.value
            } else if field.name.hasPrefix("NS.count"), let index = Int(field.name.dropFirst("NS.count".count)) {
                if case .integer(let count) = field.value { counts[index] = count }
            }
        }
        return objects.keys.sorted().map { ArchivedCount(value: objects[$0] ?? .null, count: counts[$0] ?? 1) }
    }

    /// NSAttributedString: `NSString`, `NSAttributes` (one dictionary or an array of them) and `NSAttributeInfo`
    /// (pairs of unsigned varints: run length and attribute index).
    private func attributedString(size: inout Int) throws(PlistError) -> ArchivedContent {
        guard let text = try value("NSString", size: &size)?.stringValue else { throw malformed("no NSString") }
        let attributes = try value("NSAttributes", size: &size) ?? .null
        let length = text.utf16.count
        guard let info = try data("NSAttributeInfo") else {
            return .attributedString(text, length > 0 ? [ArchivedAttributeRun(location: 0, length: length, attributes: attributes)] : [])
        }
        let table = attributes.elements ?? [attributes]
        var runs: [ArchivedAttributeRun] = []
        var reader = VarintReader(bytes: info)
        var location = 0
        while !reader.atEnd {
            guard let runLength = reader.next(), let index = reader.next(), Int(index) < table.count, runLength <= UInt64(length) else {
                throw malformed("NSAttributeInfo does not describe the runs")
            }
            runs.append(ArchivedAttributeRun(location: location, length: Int(runLength), attributes: table[Int(index)]))
            location += Int(runLength)
        }
        return .attributedString(text, runs)
    }

    private func nsValue(size: inout Int) throws(PlistError) -> ArchivedNSValue {
        if let kind = try integer("NS.special") {
            switch kind {
            case 1:
                let numbers = try Self.numbers(in: string("NS.pointval"), count: 2, malformed: malformed("bad NS.pointval"))
                return .point(x: numbers[0], y: numbers[1])
            case 2:
                let numbers = try Self.numbers(in: string("NS.sizeval"), count: 2, malformed: malformed("bad NS.sizeval"))
                return .size(width: numbers[0], height: numbers[1])
            case 3:
                let numbers = try Self.numbers(in: string("NS.rectval"), count: 4, malformed: malformed("bad NS.rectval"))
                return .rect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
            case 4:
                guard let location = try integer("NS.rangeval.location"), let length = try integer("NS.rangeval.length") else {
                    throw malformed("bad NS.rangeval")
                }
                return .range(ArchivedRange(location: location, length: length))
            case 12:
                return .edgeInsets(
                    top: try real("NS.edgeval.top") ?? 0, left: try real("NS.edgeval.left") ?? 0,
                    bottom: try real("NS.edgeval.bottom") ?? 0, right: try real("NS.edgeval.right") ?? 0)
            default:
                throw malformed("unknown NS.special \(kind)")
            }
        }
        // A value archived by type encoding: `$0` is the encoding, `$1` the old-style array of elements.
        guard let type = try string("$0") else { throw malformed("neither NS.special nor a type encoding") }
        var elements: [ArchivedValue] = []
        if case .object(let array)? = try value("$1", size: &size), case .fields(let fields) = array.content {
            let numbered = fields.compactMap { field -> (Int, ArchivedValue)? in
                guard field.name.hasPrefix("$"), let index = Int(field.name.dropFirst()) else { return nil }
                return (index, field.value)
            }
            elements = numbered.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return .encoded(type: type, elements: elements)
    }

    /// NSDecimalNumber: `NS.mantissa` (little-endian by default), `NS.exponent`, `NS.negative`, `NS.length`.
    private func decimal() throws(PlistError) -> String {
        guard let mantissaBytes = try data("NS.mantissa"), let exponent = try integer("NS.exponent") else {
            throw malformed("no NS.mantissa or NS.exponent")
        }
        let negative = (try integer("NS.negative") ?? 0) != 0
        let length = Int(try integer("NS.length") ?? Int64(mantissaBytes.count / 2))
        let bigEndian = (try integer("NS.mantissa.bo") ?? 1) == 0
        if length == 0 { return negative ? "NaN" : "0" }
        // The mantissa is up to eight 16-bit words; build it as decimal digits with base-65536 arithmetic.
        var words: [UInt16] = []
        for index in stride(from: 0, to: min(mantissaBytes.count, 16), by: 2) where index + 1 < mantissaBytes.count {
            let word =
                bigEndian
                ? UInt16(mantissaBytes[index]) << 8 | UInt16(mantissaBytes[index + 1])
                : UInt16(mantissaBytes[index + 1]) << 8 | UInt16(mantissaBytes[index])
            words.append(word)
        }
        words = Array(words.prefix(length))
        var digits: [UInt8] = [0]  // little-endian decimal digits
        for word in words.reversed() {
            var carry = UInt32(word)
            for index in digits.indices {
                let value = UInt32(digits[index]) * 65_536 + carry
                digits[index] = UInt8(value % 10)
                carry = value / 10
            }
            while carry > 0 {
                digits.append(UInt8(carry % 10))
                carry /= 10
            }
        }
        while digits.count > 1, digits.last == 0 { digits.removeLast() }
        var text = String(digits.reversed().map { Character(Unicode.Scalar($0 + 48)) })
        if exponent > 0 {
            text += String(repeating: "0", count: Int(min(exponent, 128)))
        } else if exponent < 0 {
            let shift = Int(min(-exponent, 128))
            if text.count <= shift { text = String(repeating: "0", count: shift - text.count + 1) + text }
            text.insert(".", at: text.index(text.endIndex, offsetBy: -shift))
        }
        return (negative ? "-" : "") + text
    }

    /// NSIndexSet: one range inline (`NSLocation`, `NSLength`) or several as varint pairs in `NSRangeData`.
    private func indexSet() throws(PlistError) -> [ArchivedRange] {
        let count = try integer("NSRangeCount") ?? 0
        if count == 0 { return [] }
        if count == 1, let location = try integer("NSLocation"), let length = try integer("NSLength") {
            return [ArchivedRange(location: location, length: length)]
        }
        guard let bytes = try data("NSRangeData") else { throw malformed("no NSRangeData") }
        var reader = VarintReader(bytes: bytes)
        var ranges: [ArchivedRange] = []
        while !reader.atEnd {
            guard let location = reader.next(), let length = reader.next(), location <= UInt64(Int64.max), length <= UInt64(Int64.max) else {
                throw malformed("NSRangeData is not pairs of varints")
            }
            ranges.append(ArchivedRange(location: Int64(location), length: Int64(length)))
        }
        guard ranges.count == count else { throw malformed("NSRangeCount is \(count) but NSRangeData holds \(ranges.count)") }
        return ranges
    }

    /// NSIndexPath: `NSIndexPathValue` for one index, varints in `NSIndexPathData` for several.
    private func indexPath() throws(PlistError) -> [Int] {
        let length = try integer("NSIndexPathLength") ?? 0
        if length == 0 { return [] }
        if length == 1, let value = try integer("NSIndexPathValue") { return [Int(value)] }
        guard let bytes = try data("NSIndexPathData") else { throw malformed("no NSIndexPathData") }
        var reader = VarintReader(bytes: bytes)
        var indexes: [Int] = []
        while !reader.atEnd {
            guard let value = reader.next(), value <= UInt64(Int.max) else { throw malformed("NSIndexPathData is not varints") }
            indexes.append(Int(value))
        }
        return indexes
    }

    /// The numbers of `"{{400, 300}, {200, 300}}"`.
    static func numbers(in text: String?, count: Int, malformed: PlistError) throws(PlistError) -> [Double] {
        guard let text else { throw malformed }
        let numbers = text.split(whereSeparator: { "{}, ".contains($0) }).compactMap { Double($0) }
        guard numbers.count == count else { throw malformed }
        return numbers
    }
}

/// Reads unsigned LEB128 varints, as NSIndexSet and NSAttributedString store them.
struct VarintReader {
    let bytes: [UInt8]
    var index = 0

    var atEnd: Bool { index >= bytes.count }

    mutating func next() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            guard shift < 64 else { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }
}
