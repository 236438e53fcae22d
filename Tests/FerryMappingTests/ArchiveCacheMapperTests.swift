import FerryCore
import FerryMapping
import FerryPlist
import FerryRecords
import FerryTesting
import Foundation
import Testing

/// Plist and keyed-archive caches as record sources.
@Suite struct ArchiveCacheMapperTests {
    private func map(_ bytes: [UInt8], _ options: ArchiveCacheMapper.Options = .init()) throws -> [ArchiveCacheMapper.Mapped] {
        let scratch = try Scratch()
        try scratch.write("cache", Data(bytes))
        let mapper = try ArchiveCacheMapper(path: scratch.file("cache"), options: options, assets: try StoreAssets(temporaryDirectory: scratch.path))
        var mapped: [ArchiveCacheMapper.Mapped] = []
        try mapper.run { mapped.append($0) }
        return mapped
    }

    @Test func localEntityCacheBecomesRecordsAndDeletions() throws {
        let mapped = try map(SampleArchives.localDataService())
        #expect(mapped.count == 5)
        let records = mapped.compactMap { if case .record(let record) = $0.change { record } else { nil } }
        let deletions = mapped.compactMap { if case .deletion(let deletion) = $0.change { deletion } else { nil } }
        #expect(records.count == 4 && deletions.count == 1)
        #expect(deletions.first?.recordName == "Entity.0E6F2A40-0000-4000-8000-000000000003" && deletions.first?.zoneID.zoneName == "LocalZone")
        let beetle = try #require(records.first { $0.fields["name"] == .string("Beetle") })
        #expect(beetle.recordType == "LocalEntity")
        #expect(beetle.recordName == "Entity.0E6F2A40-0000-4000-8000-000000000001" && beetle.zoneID.zoneName == "LocalZone")
        #expect(beetle.fields["desctext"] == .string("Yellow, 1972 — ünïcødé ✓"))
        #expect(beetle.fields["dateCreated"] == .timestamp(978_307_200_000 + 500_000_000_000))
        #expect(beetle.fields["recordID"] == nil && beetle.fields["cloudStatus"] == nil, "sync state is not data")
        let mini = try #require(records.first { $0.fields["name"] == .string("Mini") })
        #expect(mini.recordName == "LocalEntity.6C1A0E22-5B3D-4F7E-9A10-2B3C4D5E6F70", "a temporary ID becomes a type-prefixed name")
        #expect(mini.zoneID == .default)
        #expect(mapped.allSatisfy { $0.problems.isEmpty })
    }

    @Test func pendingOnlyLeavesUpToDateObjectsOut() throws {
        var options = ArchiveCacheMapper.Options()
        options.pendingOnly = true
        options.recordType = "Entity"
        let mapped = try map(SampleArchives.localDataService(), options)
        #expect(mapped.map(\.change.recordName).count == 3, "add, delete and update; not the two up-to-date ones")
        #expect(mapped.allSatisfy { $0.change.recordType == "Entity" })
    }

    @Test func plainPlistArraysOfDictionariesGetDeterministicNames() throws {
        let plist = PlistValue.array([
            .dictionary([
                .init(key: "title", value: .string("First")), .init(key: "count", value: .integer(3)),
                .init(key: "tags", value: .array([.string("a"), .string("b")])),
            ]),
            .dictionary([
                .init(key: "title", value: .string("Second")), .init(key: "when", value: .date(0)), .init(key: "nested", value: .dictionary([])),
            ]),
        ])
        let bytes = BinaryPlistWriter.write(plist)
        var options = ArchiveCacheMapper.Options()
        options.recordType = "Todo"
        let first = try map(bytes, options)
        let second = try map(bytes, options)
        #expect(first.map(\.change) == second.map(\.change), "names are deterministic from the file and the position")
        guard case .record(let todo)? = first.first?.change else {
            Issue.record("expected a record")
            return
        }
        #expect(todo.recordType == "Todo" && todo.recordName.hasPrefix("Todo."))
        #expect(todo.fields["count"] == .int64(3))
        #expect(todo.fields["tags"] == FieldList(.string, [.string("a"), .string("b")]).map(FieldValue.list))
        #expect(first.last?.problems.contains { $0.contains("nested") } == true, "what has no field type is reported")
    }

    @Test func notACollectionIsRefusedWithTheFile() throws {
        #expect(throws: MappingError.self) { try map(BinaryPlistWriter.write(.string("just text"))) }
        #expect(throws: MappingError.self) { try map(Array("not a plist at all".utf8)) }
    }

    @Test func theSampleIsWhatTheWriterWrites() throws {
        let path = "\(TestEnvironment.packageRoot)/Samples/\(SampleArchives.relativePath)"
        if ProcessInfo.processInfo.environment["FERRY_UPDATE_SAMPLES"] == "1" {
            try SampleArchives.write(to: "\(TestEnvironment.packageRoot)/Samples")
            return
        }
        #expect(try InputFile.contents(of: path) == SampleArchives.localDataService(), "run FERRY_UPDATE_SAMPLES=1 swift test")
    }
}
