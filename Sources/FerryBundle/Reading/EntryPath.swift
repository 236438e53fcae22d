/// Checks and normalises entry paths before anything is done with them.
enum EntryPath {
    /// The path with a leading `./` and a trailing `/` removed, or an error if it is unsafe: absolute, with `..`,
    /// `.` or empty components, backslashes or NUL bytes.
    ///
    /// - Returns: `nil` for what names nothing inside the bag: the archive's own top directory (`./` or `.`), which
    ///   `tar -czf B.tar.gz -C DIR .` stores first, and the `__MACOSX/` tree of resource forks that macOS's Finder
    ///   adds beside the bag when it compresses one (extracted, it lies outside the bag, which BagIt validators
    ///   accept too). Such a path is still checked first: `__MACOSX/../x` is refused.
    static func normalize(_ raw: String, isDirectory: Bool, archive: String) throws -> String? {
        var path = Substring(raw)
        while path.hasPrefix("./") { path = path.dropFirst(2) }
        while path.hasSuffix("/") { path = path.dropLast() }
        func refuse(_ why: String) -> BundleError {
            BundleError(.unsafeEntry, "\(archive): entry \"\(raw)\" \(why); the bundle was refused and nothing was written")
        }
        if raw.hasPrefix("/") { throw refuse("is an absolute path") }
        if isDirectory, path.isEmpty || path == "." { return nil }
        if path.isEmpty { throw refuse("has an empty name") }
        if path.utf8.contains(where: { $0 == 0 || $0 == UInt8(ascii: "\\") }) { throw refuse("contains a backslash or NUL byte") }
        // Over the bytes, without splitting (every entry of a bundle comes through here): each component's length,
        // and whether it holds only dots.
        var length = 0
        var onlyDots = true
        func endComponent() throws {
            if length == 2 && onlyDots { throw refuse("climbs out of the bundle with \"..\"") }
            if length == 0 || (length == 1 && onlyDots) { throw refuse("has an empty or \".\" path component") }
            length = 0
            onlyDots = true
        }
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/") {
                try endComponent()
            } else {
                length += 1
                if byte != UInt8(ascii: ".") { onlyDots = false }
            }
        }
        try endComponent()
        if path == Self.macOSMetadata || path.hasPrefix(Self.macOSMetadata + "/") { return nil }
        return String(path)
    }

    private static let macOSMetadata = "__MACOSX"
}
