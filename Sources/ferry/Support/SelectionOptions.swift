import ArgumentParser

/// `--type` and `--zone`: which record types and zones of a source a copy takes.
struct SelectionOptions: ParsableArguments {
    @Option(name: .customLong("type"), help: ArgumentHelp("Only changes of this record type (repeatable).", valueName: "type"))
    var types: [String] = []

    @Option(name: .customLong("zone"), help: ArgumentHelp("Only changes in this zone, by name or name@owner (repeatable).", valueName: "zone"))
    var zones: [String] = []
}
