import ArgumentParser
import FerryTransfer
import FoundationEssentials

/// `--since` and the status field: what an incremental export keeps.
struct IncrementalOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Only records whose --since-field is at or after this time (ISO 8601 time or date, or seconds since 1970).", valueName: "time"))
    var since: TimeArgument?

    @Flag(
        help: "Only changes still to be synced, from any source: a status (--status-field) of 0 (add) or 3 (update); 2 becomes a deletion.")
    var pendingOnly = false

    @Option(help: ArgumentHelp("The TIMESTAMP field --since compares.", valueName: "field"))
    var sinceField = "lastUpdate"

    @Option(help: ArgumentHelp("The sync-status field --pending-only reads (0 add, 1 up to date, 2 delete, 3 update).", valueName: "field"))
    var statusField = "cloudStatus"

    /// The filter for a source; a cache's mapper reads the status itself (it is not a field of its records).
    func filter(for source: any ChangeSource) -> FilteredChangeSource.Filter {
        var filter = FilteredChangeSource.Filter()
        filter.since = since?.milliseconds
        filter.sinceField = sinceField
        filter.pendingOnly = pendingOnly && !(source is ArchiveChangeSource)
        filter.statusField = statusField
        return filter
    }
}
