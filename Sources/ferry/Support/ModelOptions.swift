import ArgumentParser
import FerryCoreData

/// How a store command chooses the store's model: `--model PATH`, `--model-cache` or `--infer-model`.
struct ModelOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store's model: an .xcdatamodeld, .xcdatamodel, .momd or .mom.",
            discussion: "By default: model files beside the store (or one folder up) that fit it, else its model cache, else inference.",
            valueName: "path"))
    var model: String?

    @Flag(help: "Use the model cached in the store (Z_MODELCACHE), ignoring model files.")
    var modelCache = false

    @Flag(help: "Guess the model from the SQLite schema alone (names and types may be wrong).")
    var inferModel = false

    func validate() throws {
        if [model != nil, modelCache, inferModel].filter({ $0 }).count > 1 {
            throw ValidationError("choose one of --model, --model-cache and --infer-model")
        }
    }

    /// The choice for the library.
    var choice: ModelChoice {
        if let model { return .file(model) }
        if modelCache { return .modelCache }
        if inferModel { return .inferred }
        return .automatic
    }
}
