/// One entry of a bundle as an archive or a directory presents it, before any check.
struct BundleEntryHeader: Sendable, Hashable {
    /// The kind of file system object.
    enum EntryType: String, Sendable, Hashable {
        case file, directory, symbolicLink = "symbolic link", hardLink = "hard link", other = "device or special file"
    }

    /// The path as stored, with the bag's base directory.
    var path: String
    /// The kind of object.
    var type: EntryType
    /// The size the archive header declares, if any.
    var declaredSize: Int64?
}
