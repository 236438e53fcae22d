import FerryCore
import FerryCoreData
import FerryJSON
import FerryTesting
import Foundation
import Testing

/// A small store from the shared benchmark generator (`../shared/bench/make_store.py --roots 100`) reads with the
/// counts its `expected.json` promises.
@Suite struct BenchStoreTests {
    @Test func importsTheGeneratorsStoreWithItsExpectedCounts() throws {
        guard let bench = SharedFixtures.benchDirectory, SQLiteShell.isAvailable else { return }
        let scratch = try Scratch()
        let made = try ProcessResult.run("/usr/bin/env", ["python3", "\(bench)/make_store.py", scratch.file("store"), "--roots", "100"])
        #expect(made.status == 0, "\(made.errors)")
        let expected = try #require(try JSONParser.parse(String(decoding: scratch.read("store/expected.json"), as: UTF8.self)).objectValue)
        let summary = try StoreCrossCheck.run(store: scratch.file("store/CarsTrucksBuses.sqlite"), model: .automatic, keepObjects: true)
        #expect(summary.store.model.source.kind == "xcdatamodeld")
        #expect(summary.store.metadata.uuid == expected["storeUUID"]?.stringValue)
        for member in expected["entities"]?.objectValue ?? [:] {
            #expect(summary.objects[member.key] == member.value.int64Value.map(Int.init), "\(member.key)")
        }
        var noteTags = 0
        var external = 0
        var inline = 0
        for object in summary.all {
            if case .toMany(let tags)? = object.relationship("tags"), object.entity == "Note" { noteTags += tags.count }
            switch object.attribute("photo") {
            case .externalData(let data)?:
                #expect(data.size != nil)
                external += 1
            case .data?: inline += 1
            default: break
            }
        }
        #expect(noteTags == expected["noteTags"]?.int64Value.map(Int.init))
        #expect(external == expected["externalBlobs"]?.int64Value.map(Int.init))
        #expect(inline == expected["inlineBlobs"]?.int64Value.map(Int.init))
        #expect(summary.objects["DeletedCloudKitObject"] == expected["tombstones"]?.int64Value.map(Int.init))
        // The tags are the same links seen from the other side.
        let tagNotes = summary.all.filter { $0.entity == "Tag" }.reduce(0) { total, tag in
            if case .toMany(let notes)? = tag.relationship("notes") { return total + notes.count }
            return total
        }
        #expect(tagNotes == noteTags)
    }
}
