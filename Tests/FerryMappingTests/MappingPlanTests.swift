import FerryCore
import FerryCoreData
import FerryMapping
import FerryTesting
import Foundation
import Testing

/// Mapping plans: presets, the YAML a person edits, and the errors a bad plan gets.
@Suite struct MappingPlanTests {
    private func schema() throws -> (Scratch, CoreDataStore) {
        let scratch = try Scratch()
        return (scratch, try CoreDataStore(path: try LibraryStore.write(to: scratch.file("library"))))
    }

    @Test func presetsDescribeTheLayout() throws {
        let (_, store) = try schema()
        let plan = try MappingPlan.preset("type-prefixed", for: store.schema)
        #expect(plan.separator == ".")
        #expect(plan.entities["Shelf"]?.zone == "ShelfZone")
        #expect(plan.entities["Book"]?.zoneFrom == ["shelf"])
        #expect(plan.entities["Chapter"]?.zoneFrom == ["book"])
        #expect(plan.entities["Tag"]?.zone == "TagZone")
        #expect(plan.entities["Book"]?.name == NamePlan(archivedRecordID: "recordID"))
        #expect(plan.entities["Book"]?.fields?["modificationDate"] == FieldPlan(rename: "modificationDateValue"))
        #expect(plan.entities["DeletedCloudKitObject"]?.tombstone == TombstonePlan(recordID: "recordID", recordType: "recordType"))
        let scorebook = try MappingPlan.preset("scorebook", for: store.schema)
        #expect(scorebook.separator == "|~|" && scorebook.zone == "ScorebookData")
        #expect(scorebook.entities.values.allSatisfy { $0.zone == nil && $0.zoneFrom == nil })
        #expect(throws: MappingError.self) { try MappingPlan.preset("fancy", for: store.schema) }
    }

    @Test func yamlRoundTripsEveryChoice() throws {
        let (_, store) = try schema()
        var plan = try MappingPlan.preset("type-prefixed", for: store.schema)
        plan.entities["Book"]?.fields?["color"] = FieldPlan(rename: "tint: \"x\"", asset: false, action: "NONE", convert: "rgba", list: true)
        plan.entities["Tag"] = EntityPlan(skip: true, recordType: "Label #1", zone: "Ünïcode zone", exclude: ["name"])
        plan.zone = "Everything"
        let yaml = plan.yaml(header: ["a header", "two lines"]) { ["comment for \($0)"] }
        #expect(yaml.hasPrefix("# a header\n# two lines\n"))
        #expect(yaml.contains("# comment for Book"))
        #expect(try MappingPlan.decode(yaml: yaml, file: "plan.yaml") == plan)
    }

    @Test func badPlansAreRefusedWithWhereAndWhat() throws {
        let (scratch, store) = try schema()
        _ = scratch
        func error(_ yaml: String) -> MappingError? {
            do {
                let plan = try MappingPlan.decode(yaml: yaml, file: "plan.yaml")
                _ = try StoreRecordMapper(store: store, plan: plan, assets: try StoreAssets())
                return nil
            } catch let error as MappingError {
                return error
            } catch {
                Issue.record("unexpected error \(error)")
                return nil
            }
        }
        let syntax = error("separator: \".\"\nentities: [unclosed")
        #expect(syntax?.code == .invalidPlan && syntax?.message.contains("plan.yaml") == true)
        // YAML that does not parse is named by line and column, with the line shown, and said once.
        #expect(syntax?.message.hasPrefix("plan.yaml:3:1: error: parser: ") == true, "\(String(describing: syntax))")
        #expect(syntax.map { "\($0)" } == syntax?.message)
        let wrongType = error("separator: \".\"\nentities:\n  Book:\n    skip: perhaps\n")
        #expect(wrongType?.code == .invalidPlan && wrongType?.message.contains("entities.Book.skip") == true, "\(String(describing: wrongType))")
        // Keys with defaults may be left out (separator: ".", entities: none).
        #expect(error("entities: {}\n") == nil && error("zone: null\n") == nil)
        let unknown = error("separator: \".\"\nentities:\n  Book:\n    nmae: {}\n")
        #expect(
            unknown?.message.hasPrefix("plan.yaml:4:5: unknown key nmae in entities.Book; did you mean name?") == true,
            "\(String(describing: unknown))")
        let twice = error("separator: \".\"\nentities:\n  Book:\n    skip: true\n    skip: false\n")
        #expect(twice?.message.contains("skip given twice in one mapping") == true, "\(String(describing: twice))")
        let entity = error("separator: \".\"\nentities:\n  Boat: {}\n")
        #expect(entity?.code == .unknownEntity && entity?.message.contains("Shelf") == true)
        let property = error("separator: \".\"\nentities:\n  Book:\n    exclude: [subtitle]\n")
        #expect(property?.code == .unknownProperty && property?.message.contains("subtitle") == true)
        let notToOne = error("separator: \".\"\nentities:\n  Book:\n    zoneFrom: [tags]\n")
        #expect(notToOne?.code == .unknownProperty)
        let cycle = error("separator: \".\"\nentities:\n  Book:\n    zoneFrom: [shelf]\n  Shelf:\n    zoneFrom: [books]\n")
        #expect(cycle?.code == .unknownProperty, "books is to-many")
        #expect(error("separator: \".\"\nentities: {}\n") == nil, "an empty plan maps with the defaults")
    }
}
