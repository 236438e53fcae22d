extension Record {
    /// Calls `body` with each DELETE_SELF reference of the record (single or in a list) and the field it is in, in
    /// field order: the references whose target's deletion deletes this record.
    public func forEachDeleteSelfReference(_ body: (_ field: String, _ reference: Reference) throws -> Void) rethrows {
        try fields.forEachReference { field, reference in if reference.action == .deleteSelf { try body(field, reference) } }
    }
}
