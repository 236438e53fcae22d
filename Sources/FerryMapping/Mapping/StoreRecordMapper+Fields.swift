import FerryCore
import FerryCoreData
import FerryPlist
import FerryRecords
import Foundation

extension StoreRecordMapper {
    /// An attribute value as a CloudKit field value, or `nil` for no field (a null value).
    ///
    /// Integers and booleans → INT64, Double/Float → DOUBLE, Decimal → DOUBLE (or STRING with `convert: string`),
    /// strings → STRING, dates → TIMESTAMP (milliseconds), UUIDs and URIs → STRING, binary data → BYTES or ASSET
    /// (external storage, `asset: true`, or over the size threshold), archived CLLocations → LOCATION, other
    /// transformables → BYTES as stored.
    func convert(_ value: borrowing ObjectValue, as conversion: ValueConversion, problems: inout [String]) throws -> FieldValue? {
        // Switched on alone, not as a tuple with the plan's conversion: the tuple copied (retained, then released) every
        // value and the conversion's string, for the rare attribute that has one.
        func name() -> String { conversion.attributeName }
        func converts(to kind: String) -> Bool { conversion.convert == kind }
        switch value {
        case .null: return nil
        case .decimal(let text) where converts(to: "string"): return .string(text)
        case .uuid(let uuid) where converts(to: "bytes"): return .bytes(withUnsafeBytes(of: uuid.uuid) { Data($0) })
        case .string(let text) where converts(to: "rgba"):
            let components = text.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard components.count == 4 else {
                problems.append("\(name()): \"\(text)\" is not \"r,g,b,a\"; kept as text")
                return .string(text)
            }
            return FieldList(.double, components.map(FieldValue.double)).map(FieldValue.list)
        case .integer(let number): return .int64(number)
        case .boolean(let flag): return .int64(flag ? 1 : 0)
        case .double(let number): return number.isFinite ? .double(number) : nil
        case .decimal(let text):
            guard let number = Double(text), number.isFinite else {
                problems.append("\(name()): decimal \(text) has no double value; kept as text")
                return .string(text)
            }
            return .double(number)
        case .string(let text): return .string(text)
        case .date(let seconds): return .timestamp(ISO8601Timestamp.millisecondsSince1970(secondsSince2001: seconds))
        case .uuid(let uuid): return .string(uuid.text)
        case .uri(let text): return .string(text)
        case .data(let bytes):
            let asAsset = conversion.asset ?? (conversion.allowsExternalStorage || bytes.count > options.assetThreshold)
            return asAsset ? .asset(try assets.addBytes(bytes)) : .bytes(Data(bytes))
        case .externalData(let external):
            guard conversion.asset != false, let path = external.path, external.size != nil else {
                if external.size == nil {
                    problems.append("\(name()): external data file \(external.uuid) is missing; the field is left out")
                    return nil
                }
                return .bytes(Data(try InputFile.contents(of: external.path ?? "", limit: 1 << 30)))
            }
            return .asset(try assets.addFile(path))
        case .archived(let archived, let bytes):
            if case .object(let object) = archived, case .location(let location) = object.content {
                return .location(
                    Location(
                        latitude: location.latitude, longitude: location.longitude, horizontalAccuracy: location.horizontalAccuracy,
                        verticalAccuracy: location.verticalAccuracy, altitude: location.altitude, speed: location.speed,
                        course: location.course,
                        timestamp: location.timestamp.map { ISO8601Timestamp.millisecondsSince1970(secondsSince2001: $0) }))
            }
            return try blob(bytes, asset: conversion.asset)
        case .plist(_, let bytes), .opaque(let bytes): return try blob(bytes, asset: conversion.asset)
        case .unexpected(let raw), .raw(let raw):
            switch raw {
            case .null: return nil
            case .integer(let number): return .int64(number)
            case .real(let number): return number.isFinite ? .double(number) : nil
            case .text(let text): return .string(text)
            case .blob(let bytes): return try blob(bytes, asset: conversion.asset)
            }
        }
    }

    /// Bytes as BYTES, or as an ASSET when asked or too large for a record.
    private func blob(_ bytes: [UInt8], asset: Bool?) throws -> FieldValue {
        (asset ?? (bytes.count > options.assetThreshold)) ? .asset(try assets.addBytes(bytes)) : .bytes(Data(bytes))
    }
}
