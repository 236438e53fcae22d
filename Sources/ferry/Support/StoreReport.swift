import FerryCore
import FerryCoreData
import FerryJSON

/// Prints a store inspection for people (or as JSON).
enum StoreReport {
    static func print(_ report: StoreInspection, console: Console) throws -> Int32 {
        console.message("result", report.jsonValue.objectValue ?? [:])
        console.line("store     \(report.store)")
        console.line("uuid      \(report.uuid)")
        console.line("framework \(report.frameworkVersion.map(String.init) ?? "unknown")")
        console.line("model     \(report.modelSource)")
        if !report.modelVersionIdentifiers.isEmpty { console.line("versions  \(report.modelVersionIdentifiers.joined(separator: ", "))") }
        console.line("")
        var rows = [["ENTITY", "Z_ENT", "PARENT", "TABLE", "OBJECTS"]]
        for entity in report.entities {
            rows.append([
                entity.name + (entity.isAbstract ? " (abstract)" : ""), "\(entity.number)", entity.parent ?? "", entity.table, "\(entity.count)",
            ])
        }
        for line in Formatting.table(rows, rightAligned: [1, 4]) { console.line(line) }
        for entity in report.entities where !entity.attributes.isEmpty || !entity.relationships.isEmpty {
            console.line("")
            console.line("\(entity.name):")
            for attribute in entity.attributes {
                console.line("  \(attribute.name): \(attribute.type)\(attribute.column.map { "  [\($0)]" } ?? "  [no column]")")
            }
            for relationship in entity.relationships {
                let inverse = relationship.inverse.map { ", inverse \($0)" } ?? ", no inverse"
                let ordered = relationship.ordered ? ", ordered" : ""
                console.line(
                    "  \(relationship.name): \(relationship.kind) \(relationship.destination)\(inverse), \(relationship.deleteRule)\(ordered)  [\(relationship.storage)]"
                )
            }
        }
        console.line("")
        if !report.joinTables.isEmpty { console.line("join tables      \(report.joinTables.joined(separator: ", "))") }
        console.line("external data    \(report.externalDataFiles) files")
        console.line("history/CloudKit \(report.ancillaryTables.isEmpty ? "none" : report.ancillaryTables.joined(separator: ", "))")
        if !report.ancillaryEntities.isEmpty { console.line("Core Data's own  \(report.ancillaryEntities.joined(separator: ", "))") }
        for (relationship, count) in report.danglingReferences.sorted(by: { $0.key < $1.key }) {
            console.warning("\(count) references of \(relationship) point to objects that do not exist")
        }
        for note in report.notes { console.warning(note) }
        for warning in report.warnings { console.warning(warning) }
        return ExitCodes.success
    }
}
