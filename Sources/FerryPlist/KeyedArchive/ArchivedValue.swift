import Foundation

/// A value decoded from an NSKeyedArchiver archive, without the app's classes.
///
/// Plain plist values stay plain (`string`, `integer`, …). Every archived object becomes ``object(_:)``, which keeps
/// its UID (so shared objects and cycles can be told apart), its class, and its content: typed for the Foundation,
/// CloudKit and CoreLocation classes Ferry knows, a list of decoded fields for any other class.
public indirect enum ArchivedValue: Sendable, Hashable {
    /// `$null`, or UID 0.
    case null
    case bool(Bool)
    case integer(Int64)
    /// An integer above `Int64.max`.
    case unsigned(UInt64)
    case real(Double)
    case string(String)
    case data([UInt8])
    /// Seconds since 2001-01-01T00:00:00Z.
    case date(Double)
    /// A plain (class-less) array inside the archive.
    case array([ArchivedValue])
    /// A plain (class-less) dictionary inside the archive.
    case dictionary([ArchivedEntry])
    /// An archived object.
    case object(ArchivedObject)
    /// A reference back to an object that is still being decoded (the archive is cyclic there).
    case cycle(uid: Int)
}

/// A key and a value.
public struct ArchivedEntry: Sendable, Hashable {
    public var key: ArchivedValue
    public var value: ArchivedValue

    public init(key: ArchivedValue, value: ArchivedValue) {
        self.key = key
        self.value = value
    }
}

/// An object's class: its name and its chain of superclasses (`$classes`).
public struct ArchivedClass: Sendable, Hashable {
    /// The archived name, module-qualified for Swift classes (`MyApp.Cover`).
    public var name: String
    /// The class and its superclasses, most specific first.
    public var chain: [String]

    /// The name without a Swift module prefix (`Cover` for `MyApp.Cover`).
    public var unqualifiedName: String {
        guard let dot = name.lastIndex(of: ".") else { return name }
        return String(name[name.index(after: dot)...])
    }

    /// The Swift module of a module-qualified name, if any.
    public var moduleName: String? {
        guard let dot = name.lastIndex(of: ".") else { return nil }
        return String(name[..<dot])
    }
}

/// One archived object.
public struct ArchivedObject: Sendable, Hashable {
    /// Its UID in the archive.
    public var uid: Int
    /// Its class.
    public var archivedClass: ArchivedClass
    /// What it holds.
    public var content: ArchivedContent
}

/// What an archived object holds.
public enum ArchivedContent: Sendable, Hashable {
    /// NSArray, NSMutableArray.
    case array([ArchivedValue])
    /// NSSet, NSMutableSet.
    case set([ArchivedValue])
    /// NSOrderedSet, NSMutableOrderedSet.
    case orderedSet([ArchivedValue])
    /// NSCountedSet: each object with its count.
    case countedSet([ArchivedCount])
    /// NSDictionary, NSMutableDictionary.
    case dictionary([ArchivedEntry])
    /// NSString, NSMutableString.
    case string(String)
    /// NSAttributedString: the text and its attribute runs.
    case attributedString(String, [ArchivedAttributeRun])
    /// NSData, NSMutableData.
    case data([UInt8])
    /// NSDate: seconds since 2001.
    case date(Double)
    /// NSNumber stored as an object.
    case number(ArchivedValue)
    /// NSDecimalNumber, as its exact decimal text.
    case decimal(String)
    /// NSUUID.
    case uuid(UUID)
    /// NSURL: a relative string and an optional base URL.
    case url(relative: String, base: ArchivedValue?)
    /// NSNull.
    case null
    /// NSValue.
    case value(ArchivedNSValue)
    /// NSIndexSet: ranges of indexes.
    case indexSet([ArchivedRange])
    /// NSIndexPath.
    case indexPath([Int])
    /// NSTimeZone, by name.
    case timeZone(String)
    /// NSLocale, by identifier.
    case locale(String)
    /// NSMeasurement: a value and its unit's symbol.
    case measurement(value: Double, unit: String)
    /// CLLocation.
    case location(ArchivedLocation)
    /// CKRecordID.
    case recordID(ArchivedRecordID)
    /// CKRecordZoneID.
    case zoneID(ArchivedZoneID)
    /// CKReference.
    case reference(ArchivedReference)
    /// Any other class: its fields, decoded, in archive order.
    case fields([ArchivedField])
}

/// A named field of an archived object.
public struct ArchivedField: Sendable, Hashable {
    public var name: String
    public var value: ArchivedValue
}

/// An object of an NSCountedSet with its count.
public struct ArchivedCount: Sendable, Hashable {
    public var value: ArchivedValue
    public var count: Int64
}

/// A run of an attributed string: a range of the text and its attributes.
public struct ArchivedAttributeRun: Sendable, Hashable {
    public var location: Int
    public var length: Int
    public var attributes: ArchivedValue
}

/// A range, as NSRange and NSIndexSet store them.
public struct ArchivedRange: Sendable, Hashable {
    public var location: Int64
    public var length: Int64

    public init(location: Int64, length: Int64) {
        self.location = location
        self.length = length
    }
}

/// The content of an NSValue.
public enum ArchivedNSValue: Sendable, Hashable {
    case range(ArchivedRange)
    case point(x: Double, y: Double)
    case size(width: Double, height: Double)
    case rect(x: Double, y: Double, width: Double, height: Double)
    case edgeInsets(top: Double, left: Double, bottom: Double, right: Double)
    /// A C array or other value stored by type encoding (`[3i]`) and its elements.
    case encoded(type: String, elements: [ArchivedValue])
}

/// A CKRecordID.
public struct ArchivedRecordID: Sendable, Hashable {
    public var recordName: String
    public var zoneID: ArchivedZoneID

    public init(recordName: String, zoneID: ArchivedZoneID) {
        self.recordName = recordName
        self.zoneID = zoneID
    }
}

/// A CKRecordZoneID.
public struct ArchivedZoneID: Sendable, Hashable {
    public var zoneName: String
    public var ownerName: String

    public init(zoneName: String, ownerName: String = "__defaultOwner__") {
        self.zoneName = zoneName
        self.ownerName = ownerName
    }
}

/// A CKReference.
public struct ArchivedReference: Sendable, Hashable {
    public var recordID: ArchivedRecordID
    /// The action's raw value (0 none, 1 delete self), if archived.
    public var action: Int64?

    public init(recordID: ArchivedRecordID, action: Int64? = nil) {
        self.recordID = recordID
        self.action = action
    }
}

/// A CLLocation.
public struct ArchivedLocation: Sendable, Hashable {
    public var latitude: Double
    public var longitude: Double
    public var altitude: Double?
    public var horizontalAccuracy: Double?
    public var verticalAccuracy: Double?
    public var speed: Double?
    public var course: Double?
    /// Seconds since 2001.
    public var timestamp: Double?

    public init(
        latitude: Double, longitude: Double, altitude: Double? = nil, horizontalAccuracy: Double? = nil,
        verticalAccuracy: Double? = nil, speed: Double? = nil, course: Double? = nil, timestamp: Double? = nil
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.speed = speed
        self.course = course
        self.timestamp = timestamp
    }
}

/// The metadata `CKRecord.encodeSystemFields(with:)` archives.
public struct ArchivedSystemFields: Sendable, Hashable {
    public var recordType: String
    public var recordID: ArchivedRecordID
    /// The change tag (`ETag`).
    public var changeTag: String?
    /// Seconds since 2001.
    public var created: Double?
    /// Seconds since 2001.
    public var modified: Double?
    public var creator: ArchivedRecordID?
    public var lastModifier: ArchivedRecordID?
    public var modifiedByDevice: String?
}

extension ArchivedValue {
    /// The string of a plain string or an NSString object.
    public var stringValue: String? {
        switch self {
        case .string(let text): text
        case .object(let object):
            switch object.content {
            case .string(let text), .attributedString(let text, _): text
            default: nil
            }
        default: nil
        }
    }

    /// The record ID of a CKRecordID object.
    public var recordID: ArchivedRecordID? {
        guard case .object(let object) = self, case .recordID(let id) = object.content else { return nil }
        return id
    }

    /// The elements of an array, set or ordered set.
    public var elements: [ArchivedValue]? {
        switch self {
        case .array(let elements): return elements
        case .object(let object):
            switch object.content {
            case .array(let elements), .set(let elements), .orderedSet(let elements): return elements
            default: return nil
            }
        default: return nil
        }
    }
}
