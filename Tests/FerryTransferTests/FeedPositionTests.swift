import FerryBackend
import FerryRecords
import FerryTransfer
import Foundation
import Testing

/// The text `--since` takes for where a read of a change feed ended.
@Suite struct FeedPositionTests {
    @Test func aPositionReadsBackAsItWasWritten() throws {
        let position = FeedPosition(tokens: [
            ZoneID(zoneName: "CarZone"): SyncToken("p3-1z"), ZoneID(zoneName: "Shared.zone-1", ownerName: "_owner with spaces"): SyncToken("p4-0"),
        ])
        let text = position.description
        #expect(text.hasPrefix("ft1-") && !text.contains("=") && !text.contains("/") && !text.contains("+"), "shell-safe: \(text)")
        #expect(FeedPosition(text) == position)
        #expect(FeedPosition(FeedPosition(tokens: [:]).description) == FeedPosition(tokens: [:]))
    }

    @Test func aPositionNamesTheFeedItWasReadFromAndOneFromBeforeDoesNot() throws {
        let tokens = [ZoneID(zoneName: "CarZone"): SyncToken("p3-1z")]
        let position = FeedPosition(tokens: tokens, source: "6a7c638a-bcee-4df5-ac07-e1d81714ea1d")
        #expect(FeedPosition(position.description) == position)
        #expect(FeedPosition(position.description)?.source == "6a7c638a-bcee-4df5-ac07-e1d81714ea1d")
        // Printed before positions carried their feed: read as they were, with no feed to check.
        let earlier = "ft1-" + Data("CarZone\t__defaultOwner__\tp3-1z".utf8).base64EncodedString()
        #expect(FeedPosition(earlier) == FeedPosition(tokens: tokens))
        // Two feeds, or a source line of another kind: no position.
        for lines in ["\tsource\ta\n\tsource\tb\nCarZone\t__defaultOwner__\tp1-0", "\tfeed\ta\nCarZone\t__defaultOwner__\tp1-0"] {
            #expect(FeedPosition("ft1-" + Data(lines.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")) == nil, "\(lines)")
        }
    }

    @Test func anythingElseIsNoPosition() {
        // Times stay times; damaged or hostile text is refused, never half-read.
        for text in [
            "2026-01-01", "1700000000", "", "ft1-", "ft1-!!!!", "ft1-" + Data("CarZone\tonly two".utf8).base64EncodedString(),
            "ft1-" + Data("\t__defaultOwner__\tp1-0".utf8).base64EncodedString(), "ft1-" + Data([0xff, 0xfe, 0x00]).base64EncodedString(),
            "FT1-" + Data("CarZone\t__defaultOwner__\tp1-0".utf8).base64EncodedString(),
        ] {
            if text == "ft1-" {
                #expect(FeedPosition(text) == FeedPosition(tokens: [:]), "an empty position names no zone")
            } else {
                #expect(FeedPosition(text) == nil, "\(text)")
            }
        }
    }
}
