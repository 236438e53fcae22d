import ArgumentParser
import FerryCore
import FerryCoreData
import FerryJSON
import FerryMapping

/// `ferry plan`: a complete, commented mapping plan for a store, to read and edit.
struct Plan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a mapping plan (YAML) for a Core Data store, from a preset, to edit and pass to `ferry copy --mapping`.",
        discussion: """
            Presets: type-prefixed (names Type.UUID kept from recordName or an archived recordID, a zone per root \
            type, children in their parent's zone with DELETE_SELF, Deleted…Object rows as deletions), scorebook \
            (Type|~|UUID names from ckRecordName, one zone ScorebookData), plain (deterministic names, default zone).

            Examples:
              ferry plan Store.sqlite > mapping.yaml
              ferry plan Store.sqlite --preset nspersistentcloudkitcontainer > mirror.yaml
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The Core Data SQLite store.")
    var store: String

    @Option(help: ArgumentHelp("The preset to start from: type-prefixed, scorebook or plain.", valueName: "name"))
    var preset = "type-prefixed"

    @OptionGroup var modelOptions: ModelOptions

    func run() async throws {
        try await CommandRunner.runBlocking(global, label: "plan") { console in
            let opened = try CoreDataStore(path: store, model: modelOptions.choice)
            console.logModel(opened)
            let plan = try MappingPlan.preset(preset, for: opened.schema)
            let header = [
                "Ferry mapping plan for \(store) (store \(opened.metadata.uuid)), from the preset \"\(preset)\".",
                "Model: \(opened.model.source). Edit it, then: ferry copy \(store) TARGET --mapping THIS_FILE",
            ]
            let text = plan.yaml(header: header) { name in
                guard let entity = opened.schema.entity(named: name) else { return [] }
                let count = (try? opened.count(of: entity)) ?? 0
                let attributes = entity.attributes.map { "\($0.description.name) (\($0.description.type.xmlName))" }
                let relationships = entity.relationships.map { relationship in
                    let description = relationship.description
                    return "\(description.name) (\(description.isToMany ? "to-many" : "to-one") \(description.destination)"
                        + (description.deleteRule == .cascade ? ", cascade" : "") + ")"
                }
                return ["\(name): \(count) objects" + (entity.description.parentName.map { ", a kind of \($0)" } ?? "")]
                    + (attributes.isEmpty ? [] : ["attributes: \(attributes.joined(separator: ", "))"])
                    + (relationships.isEmpty ? [] : ["relationships: \(relationships.joined(separator: ", "))"])
            }
            if console.json {
                console.message("result", ["store": .string(store), "preset": .string(preset), "yaml": .string(text)])
            } else {
                try console.rawText(text)
            }
            return ExitCodes.success
        }
    }
}
