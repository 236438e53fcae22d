import FerryCore
import FerryJSON
import FerryPlist
import FerryTesting
import Foundation
import Testing

/// A plain plist's JSON written from its graph: the same bytes as the tree's JSON, measured exactly before a byte is
/// written, and refused past the output limit with the object repeated most named.
@Suite struct PlistJSONStreamTests {
    /// The streamed text, its announced size, and the tree's JSON in the same style.
    private func both(_ document: PlistDocument, style: PlistJSONStyle) throws -> (streamed: [UInt8], announced: Int64, tree: [UInt8]) {
        let text = try document.json(style: style)
        var streamed: [UInt8] = []
        try text.write { streamed += $0 }
        var writer = JSONWriter()
        switch style {
        case .canonical: writer.value(try document.value().jsonValue)
        case .pretty(let indent): writer.pretty(try document.value().jsonValue, indent: indent)
        }
        return (streamed, text.byteCount, writer.bytes)
    }

    @Test func givesTheTreesBytesForEveryFixture() throws {
        let files = PlistFixtures.all
        #expect(files.count > 10 || PlistFixtures.directory == nil)
        for file in files {
            guard let document = try? PlistDocument(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: file)))),
                (try? document.value()) != nil
            else { continue }
            for style in [PlistJSONStyle.canonical, .pretty(indent: 0), .pretty(indent: 3)] {
                let (streamed, announced, tree) = try both(document, style: style)
                #expect(streamed == tree, "\(file) \(style)")
                #expect(announced == Int64(streamed.count), "\(file) \(style)")
            }
        }
    }

    @Test func givesTheTreesBytesForEveryKindOfValue() throws {
        var table = PlistTable()
        let shared = table.add(.string("shared \"quoted\" \u{1} é"))
        let values = [
            table.add(.null), table.add(.bool(true)), table.add(.integer(-42)), table.add(.unsigned(UInt64.max)), table.add(.real(1.5)),
            table.add(.real(.infinity)), table.add(.date(-1.25)), table.add(.data([0, 1, 2, 255])), table.add(.uid(7)), shared, shared,
        ]
        let emptyArray = table.add(.array([]))
        let emptyDictionary = table.add(.dictionary(keys: [], values: []))
        let set = table.add(.set(values))
        let keys = ["b", "a", "é", "A", "$uid"].map { table.add(.string($0)) }
        let dictionary = table.add(.dictionary(keys: keys, values: [set, emptyArray, emptyDictionary, shared, values[8]]))
        table.topObject = table.add(.array([dictionary, set, dictionary, values[8]]))
        let document = try PlistDocument(bytes: BinaryPlistWriter.write(table))
        for style in [PlistJSONStyle.canonical, .pretty(indent: 0), .pretty(indent: 2)] {
            let (streamed, announced, tree) = try both(document, style: style)
            #expect(String(decoding: streamed, as: UTF8.self) == String(decoding: tree, as: UTF8.self))
            #expect(announced == Int64(streamed.count))
        }
    }

    @Test func refusesOutputPastTheLimitNamingTheSharedObject() throws {
        // Level n holds level n+1 twice: 2^20 copies of a short string, about 7 MB of JSON from a few hundred bytes.
        let (bytes, leaf) = HostilePlists.fanOut(leaf: "leaf", levels: 20)
        #expect(bytes.count < 1000)
        let document = try PlistDocument(bytes: bytes)
        var limits = PlistLimits()
        limits.maxJSONBytes = 1 << 18
        let clock = ContinuousClock()
        let started = clock.now
        #expect {
            _ = try document.json(style: .pretty(indent: 0), limits: limits)
        } throws: { error in
            guard let error = error as? PlistError, error.code == .tooLarge else { return false }
            return error.message.contains("object \(leaf) (a string of 4 bytes) is used 1048576 times")
                && error.message.contains("more than the limit of 256 KiB")
        }
        #expect(clock.now - started < .seconds(5), "measured per object, not per copy")
        // Under the default limit it is written, announced exactly.
        let text = try document.json(style: .canonical)
        var count: Int64 = 0
        try text.write { count += Int64($0.count) }
        #expect(count == text.byteCount && count > 5_000_000)
    }

    @Test func refusesAStringSharedPastTheDefaultLimit() throws {
        // A 60 000-byte string used 2^15 times: 1.8 GiB of JSON from a 60 KB file.
        let (bytes, text) = HostilePlists.fanOut(leaf: String(repeating: "x", count: 60_000), levels: 15)
        let document = try PlistDocument(bytes: bytes)
        #expect {
            _ = try document.json(style: .canonical)
        } throws: { error in
            (error as? PlistError)?.message.contains("object \(text) (a string of 60000 bytes) is used 32768 times") == true
        }
    }

    @Test func orderedSetsSurviveTheTestWritersRoundTrip() throws {
        // The plist fuzz target writes trees back with BinaryPlistWriter; an ordered set came back an array.
        let value = PlistValue.orderedSet([.string("$class"), .string("NSDefaultValue"), .integer(7)])
        #expect(try PlistDocument(bytes: BinaryPlistWriter.write(value)).value() == value)
    }

    @Test func refusesCyclesAndDepthAsTheTreeDoes() throws {
        let cyclic = try PlistDocument(bytes: HostilePlists.cycle())
        #expect(throws: PlistError.self) { _ = try cyclic.json(style: .canonical) }
        let nested = try PlistDocument(bytes: HostilePlists.deepArrays(levels: 600))
        #expect { _ = try nested.json(style: .canonical) } throws: { ($0 as? PlistError)?.code == .tooDeep }
    }
}
