import FerryBackend
import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import Testing

/// The backend contract, checked on every backend: operations and their outcomes, atomic batches, cascades, VALIDATE
/// references, the change feed, assets and the copy journal.
@Suite struct RecordStoreConformanceTests {
    let zone = OpenBackend.zone

    /// A bulk-creating backend's bulk writes give `modify`'s outcomes, and refuse the lot when the zone holds a record.
    @Test(arguments: ConformanceBackend.allCases)
    func bulkCreatesGiveTheOutcomesOfModify(_ kind: ConformanceBackend) async throws {
        let bulk = try await kind.make()
        guard let store = bulk.store as? any BulkCreating else { return }
        let byRequests = try await kind.make()
        var crossing = car("x")
        crossing.fields["elsewhere"] = .reference(Reference(recordName: "Car.1", zoneID: ZoneID(zoneName: "Other")))
        let records = [
            car("1"), note("1", pointingAt: ["Car.1"], action: .validate), note("2", pointingAt: ["Car.9"], action: .validate), car("9"),
            note("3", pointingAt: ["Car.1"]), crossing, Record(recordType: "Car", recordName: "", zoneID: zone),
            car("nul", ["name": .string("a\u{0}b")]),
        ]
        let expected = try await byRequests.store.modify(records.map { RecordOperation(.forceReplace, $0) }, in: zone, atomic: false)
        let outcomes = try #require(try await store.createAbsent(records, contents: records.map { RecordContent($0) }, in: zone))
        #expect(outcomes.map(\.errorCode) == expected.map(\.errorCode))
        // Every bulk-creating backend so far is PostgreSQL, whose jsonb holds no \u0000.
        #expect(outcomes.map(\.errorCode) == [nil, nil, .validatingReferenceError, nil, nil, .badRequest, .badRequest, .badRequest])
        for (outcome, record) in zip(outcomes, records) {
            guard case .saved(let written) = outcome else { continue }
            #expect(written.fields == record.fields && written.system?.changeTag?.isEmpty == false)
            #expect(try await bulk.store.fetch([record.id])[record.id]?.system == written.system, "the outcome has what is stored")
        }
        // Their DELETE_SELF references were written too: deleting the car takes the note with it.
        #expect(try await bulk.one(RecordOperation(.forceDelete, car("1"))).errorCode == nil)
        #expect(try await bulk.store.lookup([note("3", pointingAt: []).id])[note("3", pointingAt: []).id]?.isDeleted == true)
        // A record the zone holds, live or deleted, refuses the whole call, which writes nothing.
        for held in [car("9"), car("1")] {
            let fresh = car("new-\(held.recordName)")
            #expect(try await store.createAbsent([fresh, held], contents: [RecordContent(fresh), RecordContent(held)], in: zone) == nil)
            #expect(try await bulk.store.lookup([fresh.id]).isEmpty)
        }
        // The feed has each record once, in the order of its last change.
        let page = try await bulk.store.changes(in: zone, since: nil, limit: 100)
        #expect(page.changes.map(\.recordName) == ["Note.1", "Car.9", "Car.1", "Note.3"], "each in its latest state, deletions last")
    }

    /// A backend that journals checkpoints with its bulk writes records the checkpoint with records it all saved, not
    /// with a write that refused one (the caller records it after handling that record), and neither when it refuses
    /// the lot.
    @Test(arguments: ConformanceBackend.allCases)
    func checkpointsGoWithBulkWritesThatSaveEveryRecord(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        guard let store = backend.store as? any CheckpointedBulkCreating else { return }
        func write(_ records: [Record], done: Int64) async throws -> (refusals: [RecordOutcome?], recorded: Bool)? {
            let creation = try await store.prepareCreation(records, contents: records.map { RecordContent($0) }, in: zone)
            return try await store.createAbsent(creation, recording: CopyCheckpoint(done: done, finished: false), run: "r", source: "s")
        }
        let all = try #require(try await write([car("1"), car("2")], done: 2))
        #expect(all.recorded && all.refusals.allSatisfy { $0 == nil }, "saved, and not given back")
        #expect(try await store.lookup([car("1").id, car("2").id]).count == 2)
        #expect(try await store.checkpoint(run: "r") == CopyCheckpoint(done: 2, finished: false))
        let refusing = try #require(try await write([car("3"), note("1", pointingAt: ["Car.9"], action: .validate)], done: 4))
        #expect(!refusing.recorded && refusing.refusals.map { $0?.errorCode } == [nil, .validatingReferenceError])
        #expect(try await store.checkpoint(run: "r") == CopyCheckpoint(done: 2, finished: false))
        #expect(try await write([car("4"), car("1")], done: 6) == nil, "Car.1 is held: nothing is written")
        #expect(try await store.checkpoint(run: "r") == CopyCheckpoint(done: 2, finished: false))
        #expect(try await store.lookup([car("4").id]).isEmpty)
    }

    /// A digest-matching backend names exactly the records it does not hold live with the given content.
    @Test(arguments: ConformanceBackend.allCases)
    func digestMatchingNamesMissingDeletedAndDifferentRecords(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        guard let store = backend.store as? any DigestMatching else { return }
        let same = car("same", ["name": .string("Beetle")])
        let changed = car("changed", ["name": .string("Mini")])
        let gone = car("gone")
        for record in [same, changed, gone] { _ = try saved(try await backend.one(RecordOperation(.create, record))) }
        _ = try await backend.one(RecordOperation(.forceDelete, gone))
        var edited = changed
        edited.fields["name"] = .string("Mini Cooper")
        let missing = car("missing")
        let asked = [same, edited, gone, missing]
        let differing = try await store.differing(asked.map(\.id), digests: asked.map { RecordContent($0).digest })
        #expect(differing == [1, 2, 3], "only the first is held live with that content")
        #expect(try await store.differing([], digests: []).isEmpty)
    }

    /// Whether a zone holds a live record, as ``RecordStore/zoneOccupancy()`` tells it, is what ``RecordStore/zones()``
    /// counts: an empty zone, a zone whose one record was deleted, a zone with a record.
    @Test(arguments: ConformanceBackend.allCases)
    func zoneOccupancyAgreesWithTheCounts(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let emptied = ZoneID(zoneName: "Emptied")
        let empty = ZoneID(zoneName: "Empty")
        for zone in [emptied, empty] { #expect(try await backend.store.createZone(zone)) }
        let gone = Record(recordType: "Car", recordName: "Car.1", zoneID: emptied)
        #expect(try await backend.store.modify([RecordOperation(.create, gone)], in: emptied, atomic: false)[0].errorCode == nil)
        #expect(try await backend.store.modify([RecordOperation(.forceDelete, gone)], in: emptied, atomic: false)[0].errorCode == nil)
        _ = try saved(try await backend.one(RecordOperation(.create, car("1"))))
        let occupancy = try await backend.store.zoneOccupancy()
        #expect(occupancy == Dictionary(uniqueKeysWithValues: try await backend.store.zones().map { ($0.zoneID, $0.recordCount > 0) }))
        #expect(occupancy[zone] == true && occupancy[emptied] == false && occupancy[empty] == false)
    }

    /// ``RecordStore/zoneTokens()`` tells the zones and tokens ``RecordStore/zones()`` tells, in its order, without the
    /// counts: a new zone, a zone written to, the default zone.
    @Test(arguments: ConformanceBackend.allCases)
    func zoneTokensAreTheZonesWithoutTheirCounts(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        #expect(try await backend.store.createZone(ZoneID(zoneName: "Aardvark")))
        for name in ["1", "2"] { _ = try saved(try await backend.one(RecordOperation(.create, car(name)))) }
        let zones = try await backend.store.zones()
        let tokens = try await backend.store.zoneTokens()
        #expect(tokens == zones.map { ZoneToken(zoneID: $0.zoneID, syncToken: $0.syncToken) })
        #expect(tokens.first?.zoneID == ZoneID.default && tokens.contains { $0.zoneID == zone })
    }

    /// A digest-matching backend's answer does not depend on the order names are asked in: the order of the zone's
    /// feed, another order, again after the end of the feed, two zones in one call.
    @Test(arguments: ConformanceBackend.allCases)
    func digestMatchingAnswersAlikeInAnyOrder(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        guard let store = backend.store as? any DigestMatching else { return }
        let other = ZoneID(zoneName: "Other")
        #expect(try await backend.store.createZone(other))
        var held: [Record] = []
        for zone in [zone, other] {
            let records = (0..<300).map { number in
                Record(recordType: "Car", recordName: "Car.\(number)", zoneID: zone, fields: ["number": .int64(Int64(number))])
            }
            for start in stride(from: 0, to: records.count, by: 100) {
                let outcomes = try await backend.store.modify(
                    records[start..<start + 100].map { RecordOperation(.forceReplace, $0) }, in: zone, atomic: false)
                #expect(outcomes.allSatisfy { $0.errorCode == nil })
            }
            held += records
        }
        // Some records deleted, some asked about with other content, some the target never had.
        let deleted = Set([5, 150, 299, 305])
        for index in deleted {
            #expect(
                try await backend.store.modify([RecordOperation(.forceDelete, held[index])], in: held[index].zoneID, atomic: false)[0].errorCode
                    == nil)
        }
        var asked = held
        for index in [7, 8, 200, 450] { asked[index].fields["number"] = .int64(-1) }
        asked += (0..<20).map { Record(recordType: "Car", recordName: "New.\($0)", zoneID: $0 % 2 == 0 ? zone : other) }
        let expected = Set(deleted.map { asked[$0].recordName + "@" + asked[$0].zoneID.zoneName })
            .union([7, 8, 200, 450].map { asked[$0].recordName + "@" + asked[$0].zoneID.zoneName })
            .union(asked[600...].map { $0.recordName + "@" + $0.zoneID.zoneName })
        func differing(_ order: [Int], parts: Int) async throws -> Set<String> {
            var found: Set<String> = []
            for start in stride(from: 0, to: order.count, by: parts) {
                let part = Array(order[start..<min(start + parts, order.count)])
                let positions = try await store.differing(part.map { asked[$0].id }, digests: part.map { RecordContent(asked[$0]).digest })
                found.formUnion(positions.map { asked[part[$0]].recordName + "@" + asked[part[$0]].zoneID.zoneName })
            }
            return found
        }
        var generator = SeededGenerator(seed: 34)
        #expect(try await differing(Array(asked.indices), parts: 100) == expected, "in the feed's order")
        #expect(try await differing(Array(asked.indices), parts: 100) == expected, "again, past the feed's end")
        #expect(try await differing(asked.indices.shuffled(using: &generator), parts: 128) == expected, "in another order")
        #expect(try await differing(Array(asked.indices.reversed()), parts: 640) == expected, "both zones in one call")
    }

    @Test(arguments: ConformanceBackend.allCases)
    func createAssignsTagsAndTimesAndRefusesDuplicates(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let first = try saved(try await backend.one(RecordOperation(.create, car("1"))))
        #expect(first.system?.changeTag?.isEmpty == false)
        #expect(first.system?.created?.timestamp == first.system?.modified?.timestamp)
        #expect(try await backend.one(RecordOperation(.create, car("1"))).errorCode == .exists)
        let elsewhere = Record(recordType: "Car", recordName: "x", zoneID: ZoneID(zoneName: "Nope"))
        #expect(try await backend.one(RecordOperation(.create, elsewhere)).errorCode == .zoneNotFound)
        #expect(try await backend.store.modify([RecordOperation(.create, car("2"))], in: .default, atomic: false).first?.errorCode == .badRequest)
        #expect(try await backend.one(RecordOperation(.create, car(""))).errorCode == nil, "Car. is a name")
        let unnamed = Record(recordType: "Car", recordName: "", zoneID: zone)
        #expect(try await backend.one(RecordOperation(.create, unnamed)).errorCode == .badRequest)
        let zones = try await backend.store.zones()
        #expect(zones.map(\.zoneID) == [.default, zone])
        #expect(zones.map(\.recordCount) == [0, 2])
        let fetched = try await backend.store.fetch([first.id, car("9").id])
        #expect(fetched.count == 1 && fetched[first.id]?.fields == first.fields && fetched[first.id]?.system == first.system)
    }

    @Test(arguments: ConformanceBackend.allCases)
    func updatesAreTagCheckedAndMergeFields(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let first = try saved(try await backend.one(RecordOperation(.create, car("1", ["name": .string("Beetle"), "doors": .int64(2)]))))
        let tag = try #require(first.system?.changeTag)
        #expect(try await backend.one(RecordOperation(.update, car("1", ["doors": .int64(4)]), recordChangeTag: nil)).errorCode == .badRequest)
        #expect(try await backend.one(RecordOperation(.update, car("1", ["doors": .int64(4)]), recordChangeTag: "zz")).errorCode == .conflict)
        let updated = try saved(try await backend.one(RecordOperation(.update, car("1", ["doors": .int64(4)]), recordChangeTag: tag)))
        #expect(updated.fields["name"] == .string("Beetle") && updated.fields["doors"] == .int64(4), "update changes only listed fields")
        #expect(updated.system?.changeTag != tag)
        #expect(updated.system?.created == first.system?.created)
        #expect((updated.system?.modified?.timestamp ?? 0) > (first.system?.modified?.timestamp ?? 0))
        let replaced = try saved(
            try await backend.one(RecordOperation(.replace, car("1", ["doors": .int64(5)]), recordChangeTag: updated.system?.changeTag)))
        #expect(replaced.fields["name"] == nil, "replace removes unlisted fields")
        #expect(try await backend.one(RecordOperation(.replace, car("1"), recordChangeTag: tag)).errorCode == .conflict)
        let forced = try saved(try await backend.one(RecordOperation(.forceUpdate, car("2", ["doors": .int64(1)]))))
        #expect(forced.fields["doors"] == .int64(1), "forceUpdate creates a missing record")
        let overwritten = try saved(try await backend.one(RecordOperation(.forceReplace, car("2", ["name": .string("Mini")]), recordChangeTag: "zz")))
        #expect(overwritten.fields == ["name": .string("Mini")], "forceReplace ignores the change tag")
        #expect(try await backend.one(RecordOperation(.update, car("3"), recordChangeTag: "1")).errorCode == .notFound)
        #expect(try await backend.one(RecordOperation(.replace, car("3"), recordChangeTag: "1")).errorCode == .notFound)
    }

    @Test(arguments: ConformanceBackend.allCases)
    func lookupsGiveTagsDigestsAndTombstones(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let record = car("1", ["name": .string("Beetle"), "doors": .int64(2)])
        let stored = try saved(try await backend.one(RecordOperation(.create, record)))
        var versions = try await backend.store.lookup([record.id, car("2").id])
        #expect(versions.count == 1)
        #expect(
            versions[record.id]
                == RecordVersion(recordType: "Car", changeTag: stored.system?.changeTag ?? "", contentDigest: RecordContent(record).digest))
        // The digest is the content's, whatever system fields the record came with.
        #expect(RecordContent(stored).digest == RecordContent(record).digest)
        #expect(try await backend.one(RecordOperation.delete(Deletion(recordType: "Car", recordName: "Car.1", zoneID: zone))) == .deleted(record.id))
        versions = try await backend.store.lookup([record.id])
        if backend.store.capabilities.reportsTombstones {
            #expect(versions[record.id]?.isDeleted == true && versions[record.id]?.contentDigest == nil)
        } else {
            #expect(versions.isEmpty)
        }
        #expect(try await backend.store.fetch([record.id]).isEmpty, "fetch gives live records only")
    }

    @Test(arguments: ConformanceBackend.allCases)
    func deletesAreTagCheckedAndCascadeAlongDeleteSelf(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let parent = car("1")
        let child = note("1", pointingAt: [parent.recordName])
        let grandchild = Record(
            recordType: "Mark", recordName: "Mark.1", zoneID: zone,
            fields: ["note": .reference(Reference(recordName: child.recordName, zoneID: zone, action: .deleteSelf))])
        let loose = note("2", pointingAt: [parent.recordName], action: .none)
        let outcomes = try await backend.modify([parent, child, grandchild, loose].map { RecordOperation(.create, $0) }, atomic: true)
        #expect(outcomes.allSatisfy { $0.errorCode == nil })
        #expect(try await backend.one(RecordOperation(.delete, parent, recordChangeTag: "0")).errorCode == .conflict)
        #expect(try await backend.one(RecordOperation(.delete, parent, recordChangeTag: nil)).errorCode == .badRequest)
        #expect(try await backend.one(RecordOperation(.forceDelete, parent)) == .deleted(parent.id))
        let live = try await backend.store.fetch([parent.id, child.id, grandchild.id, loose.id])
        #expect(Set(live.keys) == [loose.id], "DELETE_SELF cascades through grandchildren; NONE references do not")
        #expect(try await backend.one(RecordOperation(.forceDelete, parent)).errorCode == .notFound)
        #expect(try await backend.one(RecordOperation(.delete, parent, recordChangeTag: "1")).errorCode == .notFound)
        #expect(try await backend.one(RecordOperation(.create, parent)).errorCode == nil, "a deleted name can be created again")
    }

    @Test(arguments: ConformanceBackend.allCases)
    func cascadesFollowTheReferencesRecordsHoldNow(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let (first, second, third) = (car("1"), car("2"), car("3"))
        _ = try await backend.modify([first, second, third].map { RecordOperation(.create, $0) })
        _ = try await backend.modify(["moved", "freed", "reborn"].map { RecordOperation(.create, note($0, pointingAt: [first.recordName])) })
        _ = try await backend.modify([
            RecordOperation(.forceReplace, note("moved", pointingAt: [second.recordName])),
            RecordOperation(.forceReplace, note("freed", pointingAt: [])),
            RecordOperation(.forceDelete, note("reborn", pointingAt: [])),
            RecordOperation(.create, note("twice", pointingAt: [third.recordName, third.recordName])),
        ])
        _ = try await backend.modify([RecordOperation(.create, note("reborn", pointingAt: []))])
        #expect(try await backend.one(RecordOperation(.forceDelete, first)) == .deleted(first.id))
        let notes = ["moved", "freed", "reborn", "twice"].map { note($0, pointingAt: []).id }
        #expect(try await backend.store.fetch(notes).count == 4, "the first car's notes point elsewhere or nowhere now")
        #expect(try await backend.one(RecordOperation(.forceDelete, second)) == .deleted(second.id))
        #expect(try await backend.store.fetch([notes[0]]).isEmpty, "the moved note follows its new parent")
        _ = try await backend.modify([RecordOperation(.forceReplace, note("twice", pointingAt: [third.recordName]))])
        #expect(try await backend.one(RecordOperation(.forceDelete, third)) == .deleted(third.id))
        #expect(Set(try await backend.store.fetch([notes[3], notes[1]]).keys) == [notes[1]])
    }

    @Test(arguments: ConformanceBackend.allCases)
    func atomicBatchesAreAllOrNothing(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        #expect(backend.store.capabilities.atomicZones)
        let before = try await backend.one(RecordOperation(.create, car("1")))
        let tokenBefore = try await backend.store.zones().last?.syncToken
        let outcomes = try await backend.modify(
            [RecordOperation(.create, car("2")), RecordOperation(.create, car("1")), RecordOperation(.forceReplace, car("3"))], atomic: true)
        #expect(outcomes.map(\.errorCode) == [.atomicError, .exists, .atomicError])
        #expect(try await backend.store.lookup([car("2").id, car("3").id]).isEmpty, "nothing of a failed atomic batch stays")
        #expect(try await backend.store.zones().last?.syncToken == tokenBefore, "nor in the change feed")
        #expect(try await backend.store.lookup([car("1").id])[car("1").id]?.changeTag == (try saved(before)).system?.changeTag)
        let loose = try await backend.modify([RecordOperation(.create, car("2")), RecordOperation(.create, car("1"))], atomic: false)
        #expect(loose.map(\.errorCode) == [nil, .exists])
        let inDefault = Record(recordType: "Car", recordName: "d", zoneID: .default)
        #expect(try await backend.store.modify([RecordOperation(.create, inDefault)], in: .default, atomic: true).first?.errorCode == .badRequest)
        #expect(try await backend.store.lookup([inDefault.id]).isEmpty)
        let twice = try await backend.modify([RecordOperation(.forceReplace, car("3")), RecordOperation(.forceReplace, car("3"))])
        #expect(twice.map(\.errorCode) == [nil, .badRequest])
        let mixed = try await backend.modify([RecordOperation(.forceReplace, car("4")), RecordOperation(.create, inDefault)], atomic: true)
        #expect(mixed.map(\.errorCode) == [.atomicError, .badRequest], "an operation outside the request's zone fails it")
    }

    @Test(arguments: ConformanceBackend.allCases)
    func validateReferencesNeedALiveTargetInTheSameZone(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let child = note("1", pointingAt: ["Car.9"], action: .validate)
        #expect(try await backend.one(RecordOperation(.create, child)).errorCode == .validatingReferenceError)
        #expect(try await backend.store.lookup([child.id]).isEmpty)
        #expect(try await backend.modify([RecordOperation(.create, car("9")), RecordOperation(.create, child)]).map(\.errorCode) == [nil, nil])
        _ = try await backend.one(RecordOperation(.forceDelete, note("1", pointingAt: [])))
        _ = try await backend.one(RecordOperation(.forceDelete, car("9")))
        #expect(try await backend.one(RecordOperation(.create, child)).errorCode == .validatingReferenceError, "a deleted target is no target")
        let crossing = Record(
            recordType: "Note", recordName: "Note.2", zoneID: zone,
            fields: ["car": .reference(Reference(recordName: "Car.9", zoneID: ZoneID(zoneName: "Other"), action: .none))])
        #expect(try await backend.one(RecordOperation(.create, crossing)).errorCode == .badRequest)
    }

    /// A backend that reads its feed as lines gives, page by page, what its feed gives: the same tokens, deletions
    /// where the feed has them, and lines that decode to the feed's records, system fields included.
    @Test(arguments: ConformanceBackend.allCases)
    func linePagesGiveTheChangesOfTheFeed(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        guard let store = backend.store as? any LineReading else { return }
        let bytes = Array("photo".utf8)
        let asset = Asset(sha256: SHA256Hasher.digest(bytes), size: Int64(bytes.count), fileName: "p \"1\".jpg")
        _ = try await store.putAsset(asset, bytes: .buffer(bytes))
        let odd: RecordFields = [
            "name": .string("quote \" back\\slash \n tab\t é ☃ \u{1F600}"), "rating": .double(0.1), "n": .int64(-9_007_199_254_740_993),
            "added": .timestamp(1_686_395_893_861), "photo": .asset(asset), "where": .location(Location(latitude: 52.5, longitude: 13.4)),
            "tags": .list(FieldList(.string, [.string("a"), .string("\"b\""), .string("")]) ?? .emptyUnknown),
            "sizes": .list(FieldList(.int64, [.int64(1), .int64(-2)]) ?? .emptyUnknown),
        ]
        _ = try await backend.modify(
            (1...4).map { RecordOperation(.create, car("\($0)")) } + [
                RecordOperation(.create, car("odd", odd)), RecordOperation(.create, note("1", pointingAt: ["Car.1", "Car.3"])),
            ])
        _ = try await backend.modify([RecordOperation(.forceDelete, car("2"))])
        var token: SyncToken?
        var pages = 0
        while true {
            let changes = try await store.changes(in: zone, since: token, limit: 2)
            let lines = try await store.changeLines(in: zone, since: token, limit: 2)
            #expect(lines.syncToken == changes.syncToken && lines.moreComing == changes.moreComing)
            var decoded: [RecordChange] = []
            var start = 0
            for entry in lines.entries {
                switch entry {
                case .line(let end):
                    decoded.append(try CloudKitJSONDecoder().decode(bytes: Array(lines.bytes[start..<end])))
                    start = end
                case .deletion(let deletion):
                    decoded.append(.deletion(deletion))
                }
            }
            #expect(start == lines.bytes.count, "the lines fill the page's bytes")
            #expect(decoded == changes.changes, "page \(pages)")
            pages += 1
            token = changes.syncToken
            if !changes.moreComing { break }
        }
        #expect(pages == 3, "six changes (a tombstone among them), two at a time")
    }

    @Test(arguments: ConformanceBackend.allCases)
    func theChangeFeedPagesWithTokensAndTombstones(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        #expect(backend.store.capabilities.changeFeed)
        _ = try await backend.modify((1...5).map { RecordOperation(.create, car("\($0)")) })
        let first = try await backend.store.changes(in: zone, since: nil, limit: 3)
        #expect(first.changes.map(\.recordName) == ["Car.1", "Car.2", "Car.3"] && first.moreComing)
        let second = try await backend.store.changes(in: zone, since: first.syncToken, limit: 3)
        #expect(second.changes.map(\.recordName) == ["Car.4", "Car.5"] && !second.moreComing)
        let quiet = try await backend.store.changes(in: zone, since: second.syncToken, limit: 100)
        #expect(quiet.changes.isEmpty && quiet.syncToken == second.syncToken && !quiet.moreComing)
        #expect(try await backend.store.zones().last?.syncToken == second.syncToken)
        _ = try await backend.modify([RecordOperation(.forceDelete, car("2")), RecordOperation(.forceReplace, car("4", ["name": .string("Mini")]))])
        let later = try await backend.store.changes(in: zone, since: second.syncToken, limit: 100)
        #expect(later.changes.map(\.recordName) == ["Car.2", "Car.4"])
        #expect(later.changes.first == .deletion(Deletion(recordType: "Car", recordName: "Car.2", zoneID: zone)), "a deletion is a tombstone")
        if case .record(let mini)? = later.changes.last {
            #expect(mini.fields == ["name": .string("Mini")] && mini.system?.changeTag != nil)
        } else {
            Issue.record("the changed record in its latest state")
        }
        let full = try await backend.store.changes(in: zone, since: nil, limit: 100)
        #expect(full.changes.map(\.recordName) == ["Car.1", "Car.3", "Car.5", "Car.2", "Car.4"], "each record once, by its last change")
        await #expect(throws: (any Error).self) { try await backend.store.changes(in: .default, since: second.syncToken, limit: 10) }
        await #expect(throws: (any Error).self) { try await backend.store.changes(in: zone, since: SyncToken("garbage"), limit: 10) }
        await #expect(throws: (any Error).self) { try await backend.store.changes(in: ZoneID(zoneName: "Nope"), since: nil, limit: 10) }
        do {
            _ = try await backend.store.changes(in: zone, since: SyncToken("garbage"), limit: 10)
        } catch {
            #expect((error as? any FerryError)?.kind == .usage, "a foreign token is the caller's mistake: \(error)")
        }
    }

    @Test(arguments: ConformanceBackend.allCases)
    func deletingAZoneDeletesItsRecordsAndANewZoneOfTheNameStartsEmpty(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let other = ZoneID(zoneName: "TruckZone")
        #expect(try await backend.store.createZone(other))
        #expect(try await backend.store.createZone(other) == false)
        _ = try await backend.one(RecordOperation(.create, car("1")))
        let truck = Record(recordType: "Truck", recordName: "Truck.1", zoneID: other, fields: ["name": .string("Hauler")])
        #expect(try await backend.one(RecordOperation(.create, truck)).errorCode == nil)
        #expect(try await backend.store.deleteZone(zone))
        #expect(try await backend.store.deleteZone(zone) == false)
        #expect(try await backend.one(RecordOperation(.create, car("2"))).errorCode == .zoneNotFound)
        #expect(try await backend.store.createZone(zone))
        #expect(try await backend.store.lookup([car("1").id]).isEmpty, "the old zone's records and tombstones are gone")
        #expect(try await backend.store.changes(in: zone, since: nil, limit: 10).changes.isEmpty)
        #expect(try await backend.store.lookup([truck.id]).count == 1)
        #expect(try await backend.store.deleteZone(.default) == false, "the default zone stays")
        #expect(try await backend.store.zones().map(\.zoneID) == [.default, zone, other])
    }

    @Test(arguments: ConformanceBackend.allCases)
    func assetsAreStoredOnceAndStreamedBackByteExact(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let bytes = (0..<(3 << 20) + 17).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 13) }
        let asset = Asset(sha256: SHA256Hasher.digest(bytes), size: Int64(bytes.count))
        let empty = Asset(sha256: SHA256Hasher.digest([]), size: 0)
        #expect(try await backend.store.missingAssets([asset, empty]) == [asset, empty])
        #expect(try await backend.store.putAsset(asset, bytes: .buffer(bytes, chunkSize: 100_000)))
        #expect(try await backend.store.putAsset(asset, bytes: .buffer(bytes)) == false, "stored once")
        #expect(try await backend.store.putAsset(empty, bytes: .buffer([])))
        #expect(try await backend.store.missingAssets([asset, empty]).isEmpty)
        #expect(try await backend.store.assetBytes(asset).collected() == bytes)
        #expect(try await backend.store.assetBytes(empty).collected() == [])
        // Bytes that do not hash to the digest are refused, and nothing is stored.
        var damaged = bytes
        damaged[1000] ^= 1
        let other = Asset(sha256: SHA256Hasher.digest(bytes.reversed()), size: Int64(bytes.count))
        await #expect(throws: (any Error).self) { try await backend.store.putAsset(other, bytes: .buffer(damaged)) }
        let short = Asset(sha256: SHA256Hasher.digest(Array(bytes.prefix(10))), size: 11)
        await #expect(throws: (any Error).self) { try await backend.store.putAsset(short, bytes: .buffer(Array(bytes.prefix(10)))) }
        #expect(try await backend.store.missingAssets([other, short]) == [other, short])
        await #expect(throws: (any Error).self) { try await backend.store.assetBytes(other) }
    }

    @Test(arguments: ConformanceBackend.allCases)
    func writersOfOneAssetAtOnceStoreItOnce(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let bytes = (0..<(2 << 20) + 5).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }
        let asset = Asset(sha256: SHA256Hasher.digest(bytes), size: Int64(bytes.count))
        let store = backend.store
        // Copies side by side (or one copy's requests) may carry the same asset: one stores it, the others find it.
        let stored = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 { group.addTask { try await store.putAsset(asset, bytes: .buffer(bytes, chunkSize: 300_000)) } }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(stored.filter { $0 }.count == 1, "stored once, by one writer: \(stored)")
        #expect(try await store.assetBytes(asset).collected() == bytes)
    }

    @Test(arguments: ConformanceBackend.allCases)
    func theJournalKeepsCheckpointsAndDeferredRecordsPerRun(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        #expect(try await backend.journal.checkpoint(run: "a") == nil)
        try await backend.journal.setCheckpoint(run: "a", source: "s", CopyCheckpoint(done: 10, finished: false))
        try await backend.journal.setCheckpoint(run: "b", source: "t", CopyCheckpoint(done: 3, finished: true))
        try await backend.journal.setCheckpoint(run: "a", source: "s", CopyCheckpoint(done: 20, finished: false))
        #expect(try await backend.journal.checkpoint(run: "a") == CopyCheckpoint(done: 20, finished: false))
        #expect(try await backend.journal.checkpoint(run: "b") == CopyCheckpoint(done: 3, finished: true))
        var withSystem = note("1", pointingAt: ["Car.1"], action: .validate)
        withSystem.system = SystemFields(changeTag: "x")
        try await backend.journal.deferRecord(withSystem, run: "a")
        try await backend.journal.deferRecord(car("2"), run: "a")
        var expected = withSystem
        expected.system = nil
        #expect(try await backend.journal.takeDeferred(run: "a") == [expected, car("2")])
        #expect(try await backend.journal.takeDeferred(run: "a").isEmpty, "taken once")
    }
}
