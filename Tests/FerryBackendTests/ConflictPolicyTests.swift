import FerryBackend
import FerryCore
import Testing

@Suite struct ConflictPolicyTests {
    @Test func policiesParseAndPrintBack() throws {
        for text in ["server-wins", "client-wins", "fail", "newer:lastUpdate"] {
            #expect(try ConflictPolicy(parsing: text).description == text)
        }
        #expect(try ConflictPolicy(parsing: "newer:lastUpdate") == .newer(field: "lastUpdate"))
        #expect(throws: BackendError.self) { try ConflictPolicy(parsing: "newer:") }
        #expect {
            try ConflictPolicy(parsing: "coin-toss")
        } throws: { error in
            (error as? BackendError)?.kind == .usage
                && (error as? BackendError)?.message == "--on-conflict coin-toss: expected server-wins, client-wins, newer:<field> or fail"
        }
    }
}
