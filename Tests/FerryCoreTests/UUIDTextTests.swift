import FerryCore
import Foundation
import Testing

@Suite struct UUIDTextTests {
    @Test func writesWhatFoundationWrites() {
        var uuids = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))]
        uuids.append(UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)))
        for _ in 0..<1000 { uuids.append(UUID()) }
        for uuid in uuids { #expect(uuid.text == uuid.uuidString) }
    }

    @Test func parsesOnlyWhatItWrites() {
        for _ in 0..<1000 {
            let uuid = UUID()
            #expect(UUID(text: uuid.uuidString) == uuid)
        }
        let text = "0E6F2A40-0000-4000-8000-00000000002A"
        #expect(UUID(text: text)?.text == text)
        for bad in [
            text.lowercased(), String(text.dropLast()), text + "0", text.replacingOccurrences(of: "-", with: "0"), "", "G" + text.dropFirst(),
        ] {
            #expect(UUID(text: bad) == nil, "\(bad)")
        }
    }

    @Test func prefixedTextIsThePrefixAndTheText() {
        let uuid = UUID()
        #expect(uuid.text(prefixedBy: "Car.") == "Car." + uuid.uuidString)
        #expect(uuid.text(prefixedBy: "SBGame|~|") == "SBGame|~|" + uuid.uuidString)
        #expect(uuid.text(prefixedBy: "") == uuid.uuidString)
        #expect(uuid.text(prefixedBy: "Véhicule·") == "Véhicule·" + uuid.uuidString, "a prefix beyond ASCII is copied as UTF-8")
        let long = String(repeating: "Prefix", count: 50)
        #expect(uuid.text(prefixedBy: long) == long + uuid.uuidString)
    }
}
