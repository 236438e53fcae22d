import FerryCore
import FerryCoreData
import FerryPlist
import FerryTesting
import Foundation
import Testing

/// The seed-shaped stores in `Samples/`: current with their builder, and read as the seeds describe them.
@Suite struct SampleStoreTests {
    static let samples = "\(TestEnvironment.packageRoot)/Samples"
    static let cars = "\(samples)/cars-trucks-buses/store/CarsTrucksBuses.sqlite"
    static let scorebook = "\(samples)/scorebook/store/Scorebook.sqlite"

    /// The store's content as the `sqlite3` shell dumps it (schema and rows; independent of page layout).
    private func dump(_ store: String) throws -> String {
        let scratch = try Scratch()
        let copy = try StoreFixtures.copy(store, into: scratch)
        let result = try ProcessResult.run("/usr/bin/env", ["sqlite3", copy, ".dump"])
        return result.output
    }

    @Test func samplesAreWhatTheBuilderWrites() throws {
        guard SQLiteShell.isAvailable else { return }
        if ProcessInfo.processInfo.environment["FERRY_UPDATE_SAMPLES"] == "1" {
            try SampleStores.write(to: Self.samples)
            return
        }
        let scratch = try Scratch()
        let photos = "\(Self.samples)/cars-trucks-buses/assets/photos"
        let cars = try SampleStores.carsTrucksBuses(photos: photos).write(
            to: scratch.file("cars"), storeName: "CarsTrucksBuses.sqlite", modelName: "CarsTrucksBuses")
        let scorebook = try SampleStores.scorebook(photos: photos).write(
            to: scratch.file("scorebook"), storeName: "Scorebook.sqlite", modelName: "Scorebook")
        let hint = "Samples/ is out of date with SampleStores; run FERRY_UPDATE_SAMPLES=1 swift test --filter samplesAreWhatTheBuilderWrites"
        for (fresh, committed) in [(cars, Self.cars), (scorebook, Self.scorebook)] {
            #expect(try dump(fresh) == dump(committed), "\(hint)")
            let freshFolder = URL(fileURLWithPath: fresh).deletingLastPathComponent().path
            let committedFolder = URL(fileURLWithPath: committed).deletingLastPathComponent().path
            var freshFiles = try DirectoryFingerprint(freshFolder).digests
            var committedFiles = try DirectoryFingerprint(committedFolder).digests
            for name in Array(freshFiles.keys) + Array(committedFiles.keys) where name.hasSuffix(".sqlite") {
                freshFiles[name] = nil
                committedFiles[name] = nil
            }
            #expect(freshFiles == committedFiles, "\(hint)")
        }
    }

    @Test func carsTrucksBusesCarriesTheSeedsIdentities() throws {
        guard SQLiteShell.isAvailable else { return }
        let summary = try StoreCrossCheck.run(store: Self.cars, model: .automatic, keepObjects: true)
        #expect(summary.objects == ["Car": 3, "Truck": 2, "Bus": 2, "Note": 6, "DeletedCloudKitObject": 1])
        #expect(summary.store.model.source.kind == "xcdatamodeld")
        #expect(summary.store.schema.warnings.isEmpty)
        let zones = ["Car": "CarZone", "Truck": "TruckZone", "Bus": "BusZone"]
        var parentOfNote: [Int64: ObjectReference] = [:]
        for object in summary.all {
            guard case .archived(let archived, _)? = object.attribute("recordID"), case .object(let recordObject) = archived,
                case .recordID(let recordID) = recordObject.content
            else {
                Issue.record("\(object.entity) p\(object.primaryKey): recordID is not an archived CKRecordID")
                continue
            }
            if object.entity == "DeletedCloudKitObject" {
                #expect(recordID.recordName == "Car.0E6F2A40-0000-0000-0000-000000000063")
                #expect(object.attribute("recordType") == .string("Car"))
                continue
            }
            // The archived identity is the recordName string, type-prefixed.
            #expect(object.attribute("recordName") == .string(recordID.recordName))
            #expect(recordID.recordName.hasPrefix("\(object.entity)."))
            if let zone = zones[object.entity] { #expect(recordID.zoneID.zoneName == zone) }
            if object.entity == "Note" {
                let parents = object.relationships.compactMap { relationship -> ObjectReference? in
                    if case .toOne(let target?) = relationship.value { return target }
                    return nil
                }
                #expect(parents.count == 1)
                if let parent = parents.first {
                    parentOfNote[object.primaryKey] = parent
                    // A note lives in its parent's zone.
                    #expect(recordID.zoneID.zoneName == zones[parent.entity])
                }
            }
        }
        #expect(parentOfNote.count == 6)
        let beetle = try #require(summary.all.first { $0.attribute("name") == .string("Beetle") })
        guard case .externalData(let photo)? = beetle.attribute("photo") else {
            Issue.record("the Beetle's photo should be stored externally")
            return
        }
        #expect(
            try photo.path.map { try InputFile.contents(of: $0) }
                == InputFile.contents(of: "\(Self.samples)/cars-trucks-buses/assets/photos/beetle.png"))
        #expect(beetle.attribute("added") == .date(1_479_340_800 - 978_307_200))
    }

    @Test func scorebookCarriesItsRecordNamesAndOrder() throws {
        guard SQLiteShell.isAvailable else { return }
        let summary = try StoreCrossCheck.run(store: Self.scorebook, model: .automatic, keepObjects: true)
        #expect(
            summary.objects == ["SBGame": 1, "SBPerson": 2, "SBMatch": 1, "SBPlayer": 2, "SBScore": 4, "SBMatchImage": 1, "SBMatchLocation": 1])
        for object in summary.all {
            guard case .string(let name)? = object.attribute("ckRecordName") else {
                Issue.record("\(object.entity) has no ckRecordName")
                continue
            }
            #expect(name.hasPrefix("\(object.entity)|~|"))
            guard case .date? = object.attribute("modificationDate") else {
                Issue.record("\(object.entity) has no modificationDate")
                continue
            }
        }
        let match = try #require(summary.all.first { $0.entity == "SBMatch" })
        guard case .toMany(let players)? = match.relationship("players") else {
            Issue.record("SBMatch.players should be to-many")
            return
        }
        #expect(players.map(\.primaryKey) == [2, 1])  // ordered, not by key
        guard case .toOne(let location?)? = match.relationship("location") else {
            Issue.record("SBMatch.location should be set")
            return
        }
        #expect(location.entity == "SBMatchLocation")
    }
}
