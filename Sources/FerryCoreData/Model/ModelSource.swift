/// Where a store's model came from.
public enum ModelSource: Sendable, Hashable, CustomStringConvertible {
    /// A version of an `.xcdatamodeld` bundle.
    case xcdatamodeld(path: String, version: String)
    /// A single `.xcdatamodel` (its `contents`).
    case xcdatamodel(path: String)
    /// A compiled `.mom` (from a `.momd` bundle or alone).
    case compiled(path: String)
    /// The store's own `Z_MODELCACHE`.
    case modelCache
    /// Guessed from the SQLite schema: names and types may be wrong.
    case inferred

    public var description: String {
        switch self {
        case .xcdatamodeld(let path, let version): "\(path) (version \(version))"
        case .xcdatamodel(let path): path
        case .compiled(let path): path
        case .modelCache: "the store's model cache (Z_MODELCACHE)"
        case .inferred: "inferred from the SQLite schema"
        }
    }

    /// A short name of the kind of source.
    public var kind: String {
        switch self {
        case .xcdatamodeld: "xcdatamodeld"
        case .xcdatamodel: "xcdatamodel"
        case .compiled: "mom"
        case .modelCache: "model-cache"
        case .inferred: "inferred"
        }
    }
}

/// A model with where it came from and how well it fits the store.
public struct LoadedModel: Sendable {
    public var model: ManagedObjectModel
    public var source: ModelSource
    /// Things a user should be warned about: a guessed model, a model that does not fit, candidates passed over.
    public var notes: [String]
    /// How a fitting model was chosen (a version picked by the store's hashes), for `--verbose`.
    public var choices: [String] = []

    /// A loaded model with the warnings and choices that came with it.
    public init(model: ManagedObjectModel, source: ModelSource, notes: [String], choices: [String] = []) {
        self.model = model
        self.source = source
        self.notes = notes
        self.choices = choices
    }
}

/// Which model source to use for a store.
public enum ModelChoice: Sendable, Hashable {
    /// Model files beside the store (or one folder up) when they fit it, else the store's model cache, else inference.
    case automatic
    /// A model at a path: `.xcdatamodeld`, `.xcdatamodel` (or its `contents`), `.momd` or `.mom`.
    case file(String)
    /// The store's own `Z_MODELCACHE` (an error when the store has none).
    case modelCache
    /// Inference from the SQLite schema alone.
    case inferred
}
