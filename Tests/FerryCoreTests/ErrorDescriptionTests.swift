import FerryCore
import Testing

/// How errors read: one line for people, the whole chain (SQL included) for `--verbose`.
@Suite struct ErrorDescriptionTests {
    /// A cause as GRDB describes an SQLite error: the statement follows the message.
    private struct SQLiteLikeError: Error, CustomStringConvertible {
        var description: String { "SQLite error 11: database disk image is malformed - while executing `SELECT Z_PK, ZNAME FROM ZCAR`" }
    }

    @Test func theStatementOfAnSQLiteCauseIsOnlyInTheVerboseForm() {
        let error = CoreError(.readFailed, "store.sqlite: SQLite failed reading table ZCAR", cause: SQLiteLikeError())
        #expect(error.description == "store.sqlite: SQLite failed reading table ZCAR (cause: SQLite error 11: database disk image is malformed)")
        #expect(!error.description.contains("SELECT"))
        #expect(error.detailedDescription().contains("while executing `SELECT Z_PK, ZNAME FROM ZCAR`"))
    }
}
