import FerryCore
import FerryPlist
import Testing

@Suite struct TextPlistTests {
    private func value(_ text: String) throws -> PlistValue { try PlistDocument(bytes: Array(text.utf8)).value() }

    @Test func readsXMLPlistsWithEntitiesCDATAAndADoctype() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict>
              <key>name</key><string>Fish &amp; Chips &#x2713; <![CDATA[<raw>]]></string>
              <key>count</key><integer>-42</integer><key>hex</key><integer>0x1F</integer>
              <key>ratio</key><real>0.5</real><key>yes</key><true/><key>no</key><false/>
              <key>when</key><date>2001-01-01T00:01:00Z</date>
              <key>bytes</key><data>AAEC
                /w==</data>
              <key>empty</key><array/><key>nothing</key><string/>
            </dict></plist>
            """
        let parsed = try value(text)
        #expect(parsed["name"] == .string("Fish & Chips ✓ <raw>"))
        #expect(parsed["count"] == .integer(-42))
        #expect(parsed["hex"] == .integer(31))
        #expect(parsed["ratio"] == .real(0.5))
        #expect(parsed["yes"] == .bool(true))
        #expect(parsed["no"] == .bool(false))
        #expect(parsed["when"] == .date(60))
        #expect(parsed["bytes"] == .data([0, 1, 2, 255]))
        #expect(parsed["empty"] == .array([]))
        #expect(parsed["nothing"] == .string(""))
    }

    @Test(arguments: [
        "<plist><string>&custom;</string></plist>",
        "<!DOCTYPE x [<!ENTITY a \"aaaa\">]><plist><string>&a;</string></plist>",
        "<plist><string>open</plist>",
        "<plist><dict><key>a</key></dict></plist>",
        "<plist><dict><key>a</key><true/><key>a</key><true/></dict></plist>",
        "<plist><integer>12x</integer></plist>",
        "<plist><date>yesterday</date></plist>",
        "<plist><unknown/></plist>",
        "<plist><string>a</string><string>b</string></plist>",
    ])
    func refusesMalformedXML(text: String) {
        #expect(throws: PlistError.self) { try value(text) }
    }

    @Test func refusesInvalidUTF8InXMLWithTheOffset() {
        var bytes = Array("<plist><string>ab".utf8)
        bytes += [0xC3, 0x28]
        bytes += Array("</string></plist>".utf8)
        #expect { try PlistDocument(bytes: bytes).value() } throws: { ($0 as? PlistError)?.offset == 15 }
    }

    @Test func readsOpenStepPlists() throws {
        let parsed = try value(
            """
            // a comment
            { name = "Beetle \\"VW\\""; list = (a, "b c", <0fbd 77>); /* nested */ inner = { key = value; }; }
            """)
        #expect(parsed["name"] == .string("Beetle \"VW\""))
        #expect(parsed["list"] == .array([.string("a"), .string("b c"), .data([0x0F, 0xBD, 0x77])]))
        #expect(parsed["inner"]?["key"] == .string("value"))
        #expect(throws: PlistError.self) { try value("{ a = b }") }
        #expect(throws: PlistError.self) { try value("( a, <0f1> )") }
    }
}
