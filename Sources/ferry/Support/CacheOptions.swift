import ArgumentParser
import FerryMapping

/// How a plist or keyed-archive cache's objects become records.
struct CacheOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp("For caches: the record type of the objects (default: each object's class; Item for dictionaries).", valueName: "type"))
    var recordType: String?

    @Option(help: ArgumentHelp("For caches: the zone of records whose archived record ID names none.", valueName: "zone"))
    var cacheZone: String?

    @Option(help: ArgumentHelp("For caches: the property holding record names (before recordID, recordName, tempID).", valueName: "name"))
    var nameProperty: String?

    /// The mapper's options; `separator` follows the preset (`|~|` for scorebook).
    func options(preset: String?, statusField: String, pendingOnly: Bool) -> ArchiveCacheMapper.Options {
        var options = ArchiveCacheMapper.Options()
        options.recordType = recordType
        options.zone = cacheZone
        options.nameProperty = nameProperty
        options.pendingOnly = pendingOnly
        options.statusProperty = statusField
        if preset == "scorebook" { options.separator = "|~|" }
        return options
    }
}
