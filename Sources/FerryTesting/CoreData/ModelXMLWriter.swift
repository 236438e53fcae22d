import Foundation

/// Writes a model as Xcode does (formats.md §2.1): `<Name>.xcdatamodeld/<Name>.xcdatamodel/contents` and
/// `.xccurrentversion`.
public enum ModelXMLWriter {
    /// The `contents` XML of a model.
    public static func contents(entities: [EntitySpec]) -> String {
        var xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" \
            systemVersion="23A344" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">

            """
        for entity in entities.sorted(by: { $0.name < $1.name }) {
            var header = "    <entity name=\"\(escape(entity.name))\" representedClassName=\"\(escape(entity.name))\""
            if let parent = entity.parent { header += " parentEntity=\"\(escape(parent))\"" }
            if entity.isAbstract { header += " isAbstract=\"YES\"" }
            if let renaming = entity.renamingIdentifier { header += " elementID=\"\(escape(renaming))\"" }
            xml += header + " syncable=\"YES\">\n"
            for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) {
                var line = "        <attribute name=\"\(escape(attribute.name))\" optional=\"YES\" attributeType=\"\(escape(attribute.type))\""
                if attribute.type == "Date" { line += " usesScalarValueType=\"NO\"" }
                if attribute.allowsExternalStorage { line += " allowsExternalBinaryDataStorage=\"YES\"" }
                if let transformer = attribute.transformer { line += " valueTransformerName=\"\(escape(transformer))\"" }
                if let derivation = attribute.derivation { line += " derived=\"YES\" derivationExpression=\"\(escape(derivation))\"" }
                xml += line + "/>\n"
            }
            for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) {
                var line = "        <relationship name=\"\(escape(relationship.name))\" optional=\"YES\""
                line += relationship.isToMany ? " toMany=\"YES\"" : " maxCount=\"1\""
                if relationship.isOrdered { line += " ordered=\"YES\"" }
                line += " deletionRule=\"\(escape(relationship.deleteRule))\" destinationEntity=\"\(escape(relationship.destination))\""
                if let inverse = relationship.inverse {
                    line += " inverseName=\"\(escape(inverse))\" inverseEntity=\"\(escape(relationship.destination))\""
                }
                xml += line + "/>\n"
            }
            xml += "    </entity>\n"
        }
        xml += "</model>\n"
        return xml
    }

    /// Writes `<name>.xcdatamodeld` into a directory.
    public static func writeBundle(entities: [EntitySpec], name: String, in directory: String) throws {
        let bundle = "\(directory)/\(name).xcdatamodeld"
        try? FileManager.default.removeItem(atPath: bundle)
        let version = "\(bundle)/\(name).xcdatamodel"
        try FileManager.default.createDirectory(atPath: version, withIntermediateDirectories: true)
        try Data(contents(entities: entities).utf8).write(to: URL(fileURLWithPath: "\(version)/contents"))
        let current = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>_XCCurrentVersionName</key>
            \t<string>\(escape(name)).xcdatamodel</string>
            </dict>
            </plist>

            """
        try Data(current.utf8).write(to: URL(fileURLWithPath: "\(bundle)/.xccurrentversion"))
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
