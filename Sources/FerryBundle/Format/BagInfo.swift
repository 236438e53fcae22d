import FerryCore

/// The fields of `bag-info.txt` Ferry writes and checks.
struct BagInfo: Sendable, Hashable {
    /// The payload's total bytes and file count (`Payload-Oxum: <octets>.<streams>`).
    var payloadBytes: Int64
    var payloadFiles: Int
    /// Ferry's bundle format version (`Ferry-Bundle-Version`).
    var formatVersion: Int
    /// `Bagging-Date` (YYYY-MM-DD).
    var baggingDate: String
    /// `Bag-Software-Agent`.
    var softwareAgent: String
    /// `External-Description`.
    var description: String

    /// The file's bytes.
    var bytes: [UInt8] {
        let lines = [
            "Bag-Software-Agent: \(softwareAgent)",
            "Bagging-Date: \(baggingDate)",
            "External-Description: \(description)",
            "Ferry-Bundle-Version: \(formatVersion)",
            "Payload-Oxum: \(payloadBytes).\(payloadFiles)",
        ]
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// Parses and checks `bag-info.txt`.
    init(bytes: [UInt8]) throws {
        let fields = try BagIt.parseTags(bytes, file: BundleLayout.bagInfoFile)
        func value(_ label: String) -> String? { fields.first(where: { $0.0.lowercased() == label.lowercased() })?.1 }
        guard let versionText = value("Ferry-Bundle-Version") else {
            throw BundleError(.notABundle, "bag-info.txt has no Ferry-Bundle-Version: this is a BagIt bag, but not a Ferry bundle")
        }
        guard let version = Int(versionText) else {
            throw BundleError(.invalidMetadata, "bag-info.txt: Ferry-Bundle-Version \"\(versionText)\" is not a number")
        }
        guard version == BundleLayout.formatVersion else {
            throw BundleError(
                .unsupportedVersion,
                "bundle format version \(version) is not supported (this Ferry reads version \(BundleLayout.formatVersion)); "
                    + (version > BundleLayout.formatVersion ? "upgrade Ferry" : "repack it with a Ferry that reads it"))
        }
        guard let oxum = value("Payload-Oxum") else {
            throw BundleError(.invalidMetadata, "bag-info.txt has no Payload-Oxum")
        }
        let parts = oxum.split(separator: ".")
        guard parts.count == 2, let octets = Int64(parts[0]), let streams = Int(parts[1]), octets >= 0, streams >= 0 else {
            throw BundleError(.invalidMetadata, "bag-info.txt: Payload-Oxum \"\(oxum)\" is not <octets>.<files>")
        }
        payloadBytes = octets
        payloadFiles = streams
        formatVersion = version
        baggingDate = value("Bagging-Date") ?? ""
        softwareAgent = value("Bag-Software-Agent") ?? ""
        description = value("External-Description") ?? ""
    }

    init(payloadBytes: Int64, payloadFiles: Int, baggingDate: String, softwareAgent: String, description: String) {
        self.payloadBytes = payloadBytes
        self.payloadFiles = payloadFiles
        formatVersion = BundleLayout.formatVersion
        self.baggingDate = baggingDate
        self.softwareAgent = softwareAgent
        self.description = description
    }
}
