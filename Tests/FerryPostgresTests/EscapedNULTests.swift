import Testing

@testable import FerryPostgres

/// Finding `\u0000` in canonical JSON, which `jsonb` cannot store, and nothing that only looks like it.
@Suite struct EscapedNULTests {
    private func holds(_ text: String) -> Bool { Array(text.utf8).containsEscapedNUL }

    @Test func anEscapedNULIsFoundWherever() {
        #expect(holds(#"{"a":"\u0000"}"#))
        #expect(holds(#"\u0000"#))
        #expect(holds(#"{"a":"x\n\u0000"}"#))
        #expect(holds(String(repeating: "a", count: 5_000) + #"\\\u0000"#), "after an escaped backslash")
    }

    @Test func whatOnlyLooksLikeOneIsNot() {
        #expect(!holds(""))
        #expect(!holds(#"{"a":"u0000"}"#))
        #expect(!holds(#"{"a":"\\u0000"}"#), "an escaped backslash, then u0000")
        #expect(!holds(#"{"a":"\u0001\u0010"}"#))
        #expect(!holds(#"\u000"#), "too short at the end")
        #expect(!holds(#"\"#))
        #expect(!holds(String(repeating: #"\\"#, count: 1_000)))
    }
}
