import FerryPlist
import Foundation

/// Decodes stored SQLite values by their attribute's model type (formats.md §1.5).
struct ValueDecoder: Sendable {
    let files: StoreFiles

    /// Decodes a stored value of an attribute of this type (`allowsExternalStorage` as the model says, for binary data).
    ///
    /// Switched on the type, then on the value taken: a switch on a `(type, value)` tuple copied every value (its
    /// string or bytes retained, then released) for each attribute of each row.
    func decode(_ raw: consuming SQLiteValue, type: AttributeType, allowsExternalStorage: Bool?) -> ObjectValue {
        if case .null = raw { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            if case .integer(let number) = raw { return .integer(number) }
        case .boolean:
            if case .integer(let number) = raw { return .boolean(number != 0) }
        case .double, .float:
            switch raw {
            case .real(let number): return .double(number)
            case .integer(let number): return .double(Double(number))
            default: break
            }
        case .decimal:
            switch raw {
            case .real(let number): return .decimal(number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : "\(number)")
            case .integer(let number): return .decimal(String(number))
            case .text(let text): return .decimal(text)
            default: break
            }
        case .string:
            switch consume raw {
            case .text(let text): return .string(text)
            case let other: return .unexpected(other)
            }
        case .uri:
            switch consume raw {
            case .text(let text): return .uri(text)
            case let other: return .unexpected(other)
            }
        case .date:
            switch raw {
            case .real(let seconds): return .date(seconds)
            case .integer(let seconds): return .date(Double(seconds))
            default: break
            }
        case .uuid:
            if case .blob(let bytes) = raw, bytes.count == 16 {
                return .uuid(
                    UUID(
                        uuid: (
                            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                            bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                        )))
            }
        case .binaryData:
            switch consume raw {
            case .blob(let bytes): return binary(bytes, allowsExternalStorage: allowsExternalStorage)
            case let other: return .unexpected(other)
            }
        case .transformable:
            switch consume raw {
            case .blob(let bytes): return transformable(bytes)
            case let other: return .unexpected(other)
            }
        case .undefined, .objectID, .composite:
            return .raw(raw)
        }
        // Stored as the type does not allow: kept as SQLite gave it.
        return .unexpected(raw)
    }

    /// Binary data, decoding the external-storage markers.
    ///
    /// `0x01` + inline bytes, or `0x02` + 36-character UUID + NUL naming a file in `_EXTERNAL_DATA`. When the model does not say whether external storage is allowed (compiled
    /// models), only the unmistakable 38-byte `0x02` form is read as a marker.
    func binary(_ bytes: [UInt8], allowsExternalStorage: Bool?) -> ObjectValue {
        guard allowsExternalStorage != false, let marker = bytes.first else { return .data(bytes) }
        if marker == 0x02, bytes.count == 38, bytes[37] == 0, let uuid = String(validating: bytes[1..<37], as: UTF8.self),
            UUID(uuidString: uuid) != nil
        {
            let path = files.externalData.map { "\($0)/\(uuid)" }
            let size = path.flatMap { try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int64 }
            return .externalData(ExternalData(uuid: uuid, path: path, size: size))
        }
        if marker == 0x01, allowsExternalStorage == true { return .data(Array(bytes.dropFirst())) }
        return .data(bytes)
    }

    /// A Transformable value: a keyed archive (the default transformers), a plain plist, or opaque bytes.
    func transformable(_ bytes: [UInt8]) -> ObjectValue {
        let isPlist = bytes.starts(with: BinaryPlist.magic) || bytes.starts(with: Array("<?xml".utf8))
        guard isPlist, let document = try? PlistDocument(bytes: bytes) else { return .opaque(bytes) }
        if let top = try? document.decodeArchive() {
            return .archived(top.first { $0.key == "root" }?.value ?? top.first?.value ?? .null, bytes: bytes)
        }
        if let value = try? document.value() { return .plist(value, bytes: bytes) }
        return .opaque(bytes)
    }
}
