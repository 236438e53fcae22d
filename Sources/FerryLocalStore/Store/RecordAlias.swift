import FerryRecords

/// Ferry's record, not GRDB's `Record` class of the same name.
public typealias Record = FerryRecords.Record
