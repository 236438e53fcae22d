import Foundation

/// The type of a property-list object.
public enum PlistKind: String, Sendable, Hashable {
    case null, bool, integer, real, date, data, string, uid, array, set, orderedSet, dictionary

    /// Whether objects of this kind contain other objects.
    public var isContainer: Bool {
        switch self {
        case .array, .set, .orderedSet, .dictionary: true
        default: false
        }
    }
}

/// An integer of a property list: signed 64-bit, or unsigned above `Int64.max`.
public enum PlistInteger: Sendable, Hashable {
    case signed(Int64)
    case unsigned(UInt64)

    /// The value as an `Int64`, if it fits.
    public var int64: Int64? {
        switch self {
        case .signed(let value): value
        case .unsigned(let value): Int64(exactly: value)
        }
    }
}

/// A property list as a graph of objects addressed by index, whatever its format.
///
/// Binary plists are such graphs on disk (``BinaryPlist`` reads them in place); XML and OpenStep plists are parsed
/// into one (``PlistTable``). Tree building (``PlistValue``) and keyed-archive decoding (``KeyedArchive``) are
/// written once against this protocol. Every accessor checks the kind and bounds and throws ``PlistError``.
public protocol PlistGraph: Sendable {
    /// The number of objects.
    var objectCount: Int { get }
    /// The root object.
    var topObject: Int { get }
    /// The kind of an object.
    func kind(of object: Int) throws(PlistError) -> PlistKind
    /// A Boolean.
    func bool(_ object: Int) throws(PlistError) -> Bool
    /// An integer; binary plists store up to 128 bits, of which values from `Int64.min` to `UInt64.max` are kept.
    func integer(_ object: Int) throws(PlistError) -> PlistInteger
    /// A real number.
    func real(_ object: Int) throws(PlistError) -> Double
    /// A date, as seconds since 2001-01-01T00:00:00Z.
    func date(_ object: Int) throws(PlistError) -> Double
    /// Data bytes.
    func data(_ object: Int) throws(PlistError) -> [UInt8]
    /// A string.
    func string(_ object: Int) throws(PlistError) -> String
    /// Whether a string object equals `text`, without building a `String`.
    func string(_ object: Int, equals text: StaticString) throws(PlistError) -> Bool
    /// A UID (a keyed archive's object reference).
    func uid(_ object: Int) throws(PlistError) -> Int
    /// The number of elements of an array or set, or of entries of a dictionary.
    func count(_ object: Int) throws(PlistError) -> Int
    /// The `index`th element of an array or set.
    func element(_ object: Int, _ index: Int) throws(PlistError) -> Int
    /// The `index`th key of a dictionary.
    func key(_ object: Int, _ index: Int) throws(PlistError) -> Int
    /// The `index`th value of a dictionary.
    func value(_ object: Int, _ index: Int) throws(PlistError) -> Int
    /// The value for a string key in a dictionary, without building strings; `nil` if absent.
    func lookup(_ dictionary: Int, _ key: StaticString) throws(PlistError) -> Int?
}

extension PlistGraph {
    /// The value for a string key in a dictionary, through the other accessors.
    public func lookup(_ dictionary: Int, _ key: StaticString) throws(PlistError) -> Int? {
        let entries = try count(dictionary)
        for index in 0..<entries {
            let candidate = try self.key(dictionary, index)
            if try string(candidate, equals: key) { return try value(dictionary, index) }
        }
        return nil
    }

    /// Whether an object is a string equal to `text` (`false` for other kinds).
    public func isString(_ object: Int, _ text: StaticString) throws(PlistError) -> Bool {
        guard try kind(of: object) == .string else { return false }
        return try string(object, equals: text)
    }
}
