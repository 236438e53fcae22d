import FerryCore
import GRDB

extension CoreDataStore {
    /// Whether the store has NSPersistentCloudKitContainer's record metadata (`ANSCKRECORDMETADATA`).
    public var hasMirroredRecordNames: Bool {
        sqlite.tables["ANSCKRECORDMETADATA"]?.columnSet.isSuperset(of: ["ZENTITYID", "ZENTITYPK", "ZCKRECORDNAME"]) == true
    }

    /// The CloudKit record names NSPersistentCloudKitContainer gave the store's objects, so a copy keeps them.
    ///
    /// Read from `ANSCKRECORDMETADATA` (formats.md §1: `ZENTITYID` is the object's `Z_ENT`, `ZENTITYPK` its `Z_PK`).
    /// Nothing when the store was never mirrored.
    public func forEachMirroredRecordName(_ body: (_ entityNumber: Int, _ primaryKey: Int64, _ recordName: String) throws -> Void) throws {
        guard hasMirroredRecordNames else { return }
        try connection.read { db in
            let rows = try Row.fetchCursor(
                db, sql: "SELECT ZENTITYID, ZENTITYPK, ZCKRECORDNAME FROM ANSCKRECORDMETADATA WHERE ZCKRECORDNAME IS NOT NULL")
            while let row = try rows.next() {
                guard let entity = row.value(at: 0).integerValue.flatMap({ Int(exactly: $0) }), let key = row.value(at: 1).integerValue,
                    case .string(let name) = row.value(at: 2).storage
                else { continue }
                try body(entity, key, name)
            }
        }
    }
}
