import ArgumentParser
import FerryTransfer
import FoundationEssentials

/// What `--since` names: a time a field is compared with, or where an earlier read of a backend's feed ended.
enum SinceArgument: ExpressibleByArgument, Sendable {
    case time(TimeArgument)
    case position(FeedPosition)

    init?(argument: String) {
        if let position = FeedPosition(argument) {
            self = .position(position)
        } else if let time = TimeArgument(argument: argument) {
            self = .time(time)
        } else {
            return nil
        }
    }

    var time: TimeArgument? {
        if case .time(let time) = self { time } else { nil }
    }

    var position: FeedPosition? {
        if case .position(let position) = self { position } else { nil }
    }
}

/// `--since` and the status field: what an incremental export keeps.
struct IncrementalOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Only records whose --since-field is at or after this time (ISO 8601 time or date, or seconds since 1970); or, from a "
                + "database, only what changed after the position an earlier copy printed (ft1-…), deletions included.",
            valueName: "time|position"))
    var since: SinceArgument?

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
        filter.since = since?.time?.milliseconds
        filter.sinceField = sinceField
        filter.pendingOnly = pendingOnly && !(source is ArchiveChangeSource)
        filter.statusField = statusField
        return filter
    }
}
