import GRDB
import Testing

@testable import FerryLocalStore

/// How SQLite's errors are reported as the local store's own.
@Suite struct LocalStoreErrorTests {
    /// A write SQLite refuses for a constraint is reported as contents Ferry did not expect, with the way to check them.
    @Test func aRefusedWriteSaysTheStoreHoldsWhatFerryDidNotExpect() {
        let error = LocalStore.translate(
            DatabaseError(resultCode: .SQLITE_CONSTRAINT, message: "UNIQUE constraint failed: assets.sha256"), path: "/tmp/a.ferry")
        #expect(error.code == .damaged)
        #expect(error.message.contains("SQLite refused a write (UNIQUE constraint failed: assets.sha256)"))
        #expect(error.message.contains("`ferry verify /tmp/a.ferry`"))
        let busy = LocalStore.translate(DatabaseError(resultCode: .SQLITE_BUSY), path: "/tmp/a.ferry")
        #expect(busy.code == .busy)
    }
}
