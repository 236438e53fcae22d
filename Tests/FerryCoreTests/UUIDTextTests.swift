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
}
