import FerryCore
import FerryJSON
import FerryPlist
import FerryTesting
import Foundation
import Testing

/// Generated hostile plists and archives: each is refused with a clear error, in bounded time and memory.
@Suite struct HostilePlistTests {
    private func error(_ bytes: [UInt8], archive: Bool = false) -> PlistError? {
        do {
            let document = try PlistDocument(bytes: bytes)
            if archive {
                _ = try document.decodeArchive()
            } else {
                _ = try document.value()
            }
            return nil
        } catch {
            return error
        }
    }

    @Test func refusesDeepNesting() {
        #expect(error(HostilePlists.deepArrays(levels: 600))?.code == .tooDeep)
        let xml = String(repeating: "<array>", count: 600) + String(repeating: "</array>", count: 600)
        #expect(error(Array("<plist>\(xml)</plist>".utf8)) != nil)
    }

    @Test(arguments: ["array", "dictionary", "set"])
    func refusesCycles(through kind: String) {
        var table = PlistTable()
        let outer = table.add(.null)
        let inner = table.add(.null)
        let key = table.add(.string("k"))
        switch kind {
        case "array":
            table.set(outer, .array([inner]))
            table.set(inner, .array([outer]))
        case "set":
            table.set(outer, .set([inner]))
            table.set(inner, .set([outer]))
        default:
            table.set(outer, .dictionary(keys: [key], values: [inner]))
            table.set(inner, .dictionary(keys: [key], values: [outer]))
        }
        table.topObject = outer
        #expect(error(BinaryPlistWriter.write(table))?.code == .cycle)
    }

    @Test func refusesSharedSubtreeBombs() {
        // Level n is an array holding level n+1 twice: 2^60 values if expanded, 61 objects on disk.
        var table = PlistTable()
        var below = table.add(.string("leaf"))
        for _ in 0..<60 { below = table.add(.array([below, below])) }
        table.topObject = below
        let bytes = BinaryPlistWriter.write(table)
        #expect(bytes.count < 1000)
        #expect(error(bytes)?.code == .tooLarge)
        // The same shape as an archive: each level an NSArray holding the next level's UID twice.
        var archive = KeyedArchiveBuilder()
        var uid = archive.add(.string("leaf"))
        for _ in 0..<60 { uid = archive.object("NSArray", fields: ["NS.objects": .array([.uid(uid), .uid(uid)])]) }
        #expect(error(archive.binary(root: uid), archive: true)?.code == .tooLarge)
        // Written as JSON instead, shared objects appear once: the output stays small.
        var small = KeyedArchiveBuilder()
        var node = small.add(.string("leaf"))
        for _ in 0..<10 { node = small.object("NSArray", fields: ["NS.objects": .array([.uid(node), .uid(node)])]) }
        let decoded = try? PlistDocument(bytes: small.binary(root: node)).decodeArchive()
        let json = decoded?.first?.value.jsonValue
        #expect(json.map { JSONWriter.canonical($0).count < 2000 } == true)
    }

    @Test func refusesCountsBeyondTheFile() {
        var table = PlistTable()
        let leaf = table.add(.string("x"))
        table.topObject = table.add(.array([leaf]))
        var bytes = BinaryPlistWriter.write(table)
        // The array's marker is at its offset: claim 2^31 elements through an integer count.
        let arrayOffset = bytes.firstIndex(of: 0xA1) ?? 0
        bytes.replaceSubrange(arrayOffset...arrayOffset, with: [0xAF, 0x12, 0x7F, 0xFF, 0xFF, 0xFF])
        #expect(error(bytes) != nil)
        var data = PlistTable()
        data.topObject = data.add(.data([1, 2, 3]))
        var dataBytes = BinaryPlistWriter.write(data)
        if let marker = dataBytes.firstIndex(of: 0x43) { dataBytes[marker] = 0x4E }
        #expect(error(dataBytes)?.code == .tooLarge)
    }

    @Test func refusesBrokenTrailersAndReferences() {
        var table = PlistTable()
        let leaf = table.add(.string("leaf"))
        table.topObject = table.add(.array([leaf]))
        let good = BinaryPlistWriter.write(table)
        #expect(error(good) == nil)
        for cut in [1, 8, 20, 31, 32, good.count - 9] {
            #expect(error(Array(good.dropLast(cut))) != nil, "cut \(cut) accepted")
        }
        var badTop = good
        badTop[badTop.count - 9] = 5  // top object 5 of 2
        #expect(error(badTop)?.reason.contains("top object") == true)
        var badSize = good
        badSize[badSize.count - 26] = 0  // offset size 0
        #expect(error(badSize)?.reason.contains("offset size 0") == true)
        var badReference = good
        if let array = badReference.firstIndex(of: 0xA1) { badReference[array + 1] = 9 }
        #expect(error(badReference)?.reason.contains("reference to object 9") == true)
        #expect(error(Array("bplist00".utf8))?.code == .malformed)
        #expect(error(Array("hello".utf8))?.code == .notAPlist)
        #expect(error([])?.code == .notAPlist)
    }

    @Test(arguments: [(1, 1), (2, 1), (3, 2), (4, 2), (8, 4), (2, 8)])
    func readsEveryOffsetAndReferenceWidth(offsetSize: Int, referenceSize: Int) throws {
        let value: PlistValue = .dictionary([
            .init(key: "name", value: .string("Beetle")), .init(key: "list", value: .array([.integer(-5), .real(2.5), .bool(true)])),
            .init(key: "when", value: .date(1000.5)), .init(key: "bytes", value: .data([0, 255])),
            .init(key: "big", value: .unsigned(UInt64.max)), .init(key: "text", value: .string("ünï ✓ 𝄞")),
        ])
        var table = PlistTable()
        table.topObject = BinaryPlistWriter.add(value, to: &table)
        let bytes = BinaryPlistWriter.write(table, offsetSize: offsetSize, referenceSize: referenceSize)
        #expect(try PlistDocument(bytes: bytes).value() == value)
    }

    @Test func refusesBrokenArchives() {
        func archiveError(_ archive: KeyedArchiveBuilder, root: Int) -> PlistError? { error(archive.binary(root: root), archive: true) }
        var outOfRange = KeyedArchiveBuilder()
        let array = outOfRange.object("NSArray", fields: ["NS.objects": .array([.uid(99)])])
        #expect(archiveError(outOfRange, root: array)?.reason.contains("UID 99") == true)
        var nameless = KeyedArchiveBuilder()
        let badClass = nameless.add(.dictionary([.init(key: "$classes", value: .array([]))]))
        let object = nameless.add(.dictionary([.init(key: "$class", value: .uid(badClass))]))
        #expect(archiveError(nameless, root: object)?.code == .malformedArchive)
        var deep = KeyedArchiveBuilder()
        var uid = deep.add(.string("leaf"))
        for _ in 0..<700 { uid = deep.object("NSArray", fields: ["NS.objects": .array([.uid(uid)])]) }
        #expect(archiveError(deep, root: uid)?.code == .tooDeep)
        var notArchive = PlistTable()
        notArchive.topObject = BinaryPlistWriter.add(.dictionary([.init(key: "a", value: .integer(1))]), to: &notArchive)
        let plainDocument = try? PlistDocument(bytes: BinaryPlistWriter.write(notArchive))
        #expect(plainDocument != nil)
        #expect((try? plainDocument?.decodeArchive()) == nil)
    }

    @Test func cyclicArchivesDecodeWithCycleMarkers() throws {
        var archive = KeyedArchiveBuilder()
        let first = archive.reserve()
        let second = archive.object(
            "NSMutableArray", chain: ["NSMutableArray", "NSArray", "NSObject"], fields: ["NS.objects": .array([.uid(first)])])
        archive.object("Node", fields: ["next": .uid(second), "name": .string("a")], at: first)
        let top = try #require(try PlistDocument(bytes: archive.binary(root: first)).decodeArchive())
        let json = top[0].value.jsonValue
        #expect(
            json == [
                "$class": "Node", "$classes": ["Node", "NSObject"], "$id": .integer(Int64(first)), "name": "a",
                "next": [["$ref": .integer(Int64(first))]],
            ])
    }

    /// A plain array inside an archived object that contains itself is refused at the depth limit.
    ///
    /// Found by fuzzing (`Scripts/fuzz model`): it made the decoder recurse until the stack overflowed.
    @Test func refusesAnArchivedObjectHoldingACollectionThatContainsItself() throws {
        var table = PlistTable()
        func string(_ text: String) -> Int { table.add(.string(text)) }
        let top = table.add(.null)
        let null = string("$null")
        let object = table.add(.null)
        let loop = table.add(.null)
        table.set(loop, .array([loop, loop]))
        let classes = table.add(.array([string("Node"), string("NSObject")]))
        let classDefinition = table.add(.dictionary(keys: [string("$classname"), string("$classes")], values: [string("Node"), classes]))
        let classUID = table.add(.uid(3))
        table.set(object, .dictionary(keys: [string("$class"), string("loop")], values: [classUID, loop]))
        let objects = table.add(.array([null, object, null, classDefinition]))
        let rootUID = table.add(.uid(1))
        let topDictionary = table.add(.dictionary(keys: [string("root")], values: [rootUID]))
        table.set(
            top,
            .dictionary(
                keys: [string("$archiver"), string("$version"), string("$top"), string("$objects")],
                values: [string("NSKeyedArchiver"), table.add(.integer(100_000)), topDictionary, objects]))
        table.topObject = top
        let bytes = BinaryPlistWriter.write(table)
        let document = try PlistDocument(bytes: bytes)
        #expect(throws: PlistError.self) { try document.decodeArchive() }
    }
}
