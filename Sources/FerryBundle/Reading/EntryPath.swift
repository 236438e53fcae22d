/// Checks and normalises entry paths before anything is done with them.
enum EntryPath {
    /// The path with a leading `./` and a trailing `/` removed, or an error if it is unsafe: absolute, with `..`,
    /// `.` or empty components, backslashes or NUL bytes.
    static func normalize(_ raw: String, archive: String) throws -> String {
        var path = Substring(raw)
        while path.hasPrefix("./") { path = path.dropFirst(2) }
        while path.hasSuffix("/") { path = path.dropLast() }
        func refuse(_ why: String) -> BundleError {
            BundleError(.unsafeEntry, "\(archive): entry \"\(raw)\" \(why); the bundle was refused and nothing was written")
        }
        if raw.hasPrefix("/") { throw refuse("is an absolute path") }
        if path.isEmpty { throw refuse("has an empty name") }
        if path.utf8.contains(0) || path.contains("\\") { throw refuse("contains a backslash or NUL byte") }
        for component in path.split(separator: "/", omittingEmptySubsequences: false) {
            if component == ".." { throw refuse("climbs out of the bundle with \"..\"") }
            if component == "." || component.isEmpty { throw refuse("has an empty or \".\" path component") }
        }
        return String(path)
    }
}
