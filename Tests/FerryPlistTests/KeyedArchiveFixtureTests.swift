import FerryCore
import FerryJSON
import FerryPlist
import FerryTesting
import Foundation
import Testing

/// Real archives written by Apple's frameworks decode into the expected values.
@Suite struct KeyedArchiveFixtureTests {
    private func root(_ relative: String) throws -> ArchivedValue? {
        guard let bytes = try PlistFixtures.bytes(relative) else { return nil }
        let top = try #require(try PlistDocument(bytes: bytes).decodeArchive())
        return top.first { $0.key == "root" }?.value ?? top.first?.value
    }

    private func content(_ relative: String) throws -> (ArchivedClass, ArchivedContent)? {
        guard let value = try root(relative) else { return nil }
        guard case .object(let object) = value else {
            Issue.record("\(relative): root is not an object: \(value)")
            return nil
        }
        return (object.archivedClass, object.content)
    }

    @Test func readsCKRecordSystemFields() throws {
        guard let bytes = try PlistFixtures.bytes("apple_cloud_notes_parser/ZSERVERRECORDDATA.bin") else { return }
        let document = try PlistDocument(bytes: bytes)
        let fields = try #require(try document.archivedSystemFields())
        #expect(fields.recordType == "AccountData")
        #expect(
            fields.recordID == ArchivedRecordID(recordName: "AccountData", zoneID: ArchivedZoneID(zoneName: "Notes", ownerName: "__defaultOwner__")))
        #expect(fields.created == 597_455_141.68)
        #expect(fields.modified == 685_881_597.882)
        #expect(fields.creator?.recordName == "__defaultOwner__")
        #expect(fields.creator?.zoneID.zoneName == "_defaultZone")
        #expect(fields.modifiedByDevice == "Tester’s iPhone")
        #expect(fields.changeTag != nil)
    }

    @Test func readsFoundationCollectionsURLsAndUUIDs() throws {
        guard let value = try root("swift-corelibs-foundation/NSKeyedUnarchiver-ComplexTest.plist") else { return }
        let json = value.jsonValue
        #expect(json.objectValue?["string"] == "hello")
        #expect(json.objectValue?["array"] == [nil, "hello", 34545, ["key": "val"]])
        #expect(json.objectValue?["uuid"]?.objectValue?["uuid"] == "71DC068E-3420-45FF-919E-3A267D55EC22")
        #expect(json.objectValue?["url"]?.objectValue?["relative"] == "index.xml")
        #expect(json.objectValue?["url"]?.objectValue?["base"]?.objectValue?["relative"] == "https://www.swift.org")
    }

    @Test func readsOrderedSetsByNumberedKeys() throws {
        guard let (archivedClass, content) = try content("swift-corelibs-foundation/NSKeyedUnarchiver-OrderedSetTest.plist") else { return }
        #expect(archivedClass.chain.contains("NSOrderedSet"))
        guard case .orderedSet(let elements) = content else { Issue.record("not an ordered set: \(content)"); return }
        #expect(!elements.isEmpty)
        #expect(elements.allSatisfy { $0.stringValue != nil })
    }

    @Test func readsNSValues() throws {
        guard let (_, range) = try content("swift-corelibs-foundation/NSKeyedUnarchiver-RangeTest.plist"),
            let (_, rect) = try content("swift-corelibs-foundation/NSKeyedUnarchiver-RectTest.plist"),
            let (_, insets) = try content("swift-corelibs-foundation/NSKeyedUnarchiver-EdgeInsetsTest.plist"),
            let (_, concrete) = try content("swift-corelibs-foundation/NSKeyedUnarchiver-ConcreteValueTest.plist")
        else { return }
        #expect(range == .value(.range(ArchivedRange(location: 97345, length: 98345))))
        #expect(rect == .value(.rect(x: 400, y: 300, width: 200, height: 300)))
        #expect(insets == .value(.edgeInsets(top: 1, left: 2, bottom: 3, right: 4)))
        #expect(concrete == .value(.encoded(type: "[3i]", elements: [.integer(1), .integer(2), .integer(3)])))
    }

    @Test func readsAttributedStringsWithTheirRuns() throws {
        guard let (_, content) = try content("swift-corelibs-foundation/Fixtures-macOS-10.14/NSAttributedString.archive") else { return }
        guard case .attributedString(let text, let runs) = content else { Issue.record("\(content)"); return }
        #expect(text == "0123456789")
        // NSAttributeInfo 01 00 01 01 04 02 02 01 01 03 01 00: six runs (length, attribute index).
        #expect(runs.map(\.length) == [1, 1, 4, 2, 1, 1])
        let fonts = runs.compactMap { run -> String? in
            guard case .object(let dictionary) = run.attributes, case .dictionary(let entries) = dictionary.content else { return nil }
            return entries.first { $0.key.stringValue == "Font" }?.value.stringValue
        }
        #expect(fonts == ["Helvetica", "Times", "Helvetica", "Times"])
    }

    @Test func readsCountedSetsIndexSetsMeasurementsAndIndexPaths() throws {
        guard let (_, counted) = try content("swift-corelibs-foundation/Fixtures-macOS-10.14/NSCountedSet-NumbersAppearingSeveralTimes.archive"),
            let (_, ranges) = try content("swift-corelibs-foundation/Fixtures-macOS-10.14/NSIndexSet-ManyRanges.archive"),
            let (_, one) = try content("swift-corelibs-foundation/Fixtures-macOS-10.14/NSIndexSet-OneRange.archive"),
            let (_, measurement) = try content("swift-corelibs-foundation/Fixtures-macOS-10.14/NSMeasurement-Length.archive"),
            let (_, path) = try content("swift-corelibs-foundation/Fixtures-macOS-10.14/NSIndexPath-ManyIndices.archive")
        else { return }
        guard case .countedSet(let counts) = counted else { Issue.record("\(counted)"); return }
        #expect(Set(counts.map(\.value)) == [.integer(1), .integer(2), .integer(3), .integer(4), .integer(5)])
        #expect(counts.allSatisfy { $0.count == 5 })
        guard case .indexSet(let list) = ranges else { Issue.record("\(ranges)"); return }
        #expect(list.count == 4)
        #expect(list.prefix(3).map(\.location) == [0, 100, 1000])
        #expect(one == .indexSet([ArchivedRange(location: 0, length: 50)]))
        #expect(measurement == .measurement(value: 45, unit: "mi"))
        #expect(path == .indexPath([4, 8, 15, 16, 23, 42]))
    }

    @Test func readsTimeZonesLocalesAndDatesInsideFormatters() throws {
        guard let value = try root("swift-corelibs-foundation/Fixtures-macOS-10.14/DateIntervalFormatter-ValuesSetWithTemplate.archive")
        else { return }
        guard case .object(let formatter) = value, case .fields(let fields) = formatter.content else { Issue.record("\(value)"); return }
        #expect(formatter.archivedClass.name == "NSDateIntervalFormatter")
        let locale = fields.first { $0.name == "NS.locale" }?.value
        guard case .object(let localeObject)? = locale else { Issue.record("no locale"); return }
        #expect(localeObject.content == .locale("ja-JP"))
        let zone = fields.first { $0.name == "NS.timeZone" }?.value
        guard case .object(let zoneObject)? = zone else { Issue.record("no time zone"); return }
        #expect(zoneObject.content == .timeZone("GMT+0100"))
    }

    @Test func keepsModuleQualifiedClassesAndMarksCycles() throws {
        guard let value = try root("bpylist2/circular_archive.plist") else { return }
        guard case .object(let object) = value else { Issue.record("\(value)"); return }
        #expect(object.archivedClass.name == "crap.Foo")
        #expect(object.archivedClass.unqualifiedName == "Foo")
        #expect(object.archivedClass.moduleName == "crap")
        guard case .fields(let fields) = object.content else { Issue.record("\(object.content)"); return }
        #expect(fields.first { $0.name == "recursive" }?.value == .cycle(uid: object.uid))
        #expect(fields.first { $0.name == "title" }?.value == .string("hello"))
    }

    @Test func readsArchivesWhoseTopKeyIsNotRoot() throws {
        guard let bytes = try PlistFixtures.bytes("rust-plist/binary_NSKeyedArchiver.plist") else { return }
        let top = try #require(try PlistDocument(bytes: bytes).decodeArchive())
        #expect(top.map(\.key) == ["foundItems"])
        guard case .object(let set) = top[0].value, case .indexSet(let ranges) = set.content else { Issue.record("\(top)"); return }
        #expect(set.archivedClass.name == "NSMutableIndexSet")
        #expect(ranges.count == 42)
    }

    @Test func readsTheRealAppArchive() throws {
        guard let bytes = try PlistFixtures.bytes("bpylist2/fullChangeLog.bplist") else { return }
        let document = try PlistDocument(bytes: bytes)
        let inspection = try PlistInspection(document)
        #expect(inspection.isKeyedArchive)
        #expect(inspection.classes.contains { $0.name.hasPrefix("JNStreamTable") })
        let json = try #require(try document.decodeArchive()).map(\.value.jsonValue)
        #expect(!json.isEmpty)
    }
}
