import FerryBackend
import FerryCore
import FerryLocalStore
import FerryTransfer

/// Opens what the everyday verbs (`ls`, `cat`, `verify`) read: a bundle by its path, any backend through the backend
/// contract.
enum BackendOpener {
    /// What a name given to a reading verb is.
    enum Opened {
        /// A bundle archive or bag directory, read with the bundle reader.
        case bundle(String)
        /// A backend, read through the contract, with the local store under it when it is one.
        case backend(any RecordStore, local: LocalStore?)
    }

    /// Opens `name` for reading; `verb` names the command in the refusal of what it cannot read.
    static func open(_ name: String, verb: String, console: Console) async throws -> Opened {
        switch try Endpoint.source(name) {
        case .bundle(let path):
            return .bundle(path)
        case .localStore(let path):
            let store = try LocalStore(path: path, readOnly: true)
            return .backend(LocalRecordStore(store), local: store)
        case .postgres(let url):
            return .backend(try await PostgresOpener.open(url, console: console, migrate: false), local: nil)
        case .coreData(let path):
            throw TransferError(
                .unsupported,
                "\(path) is a Core Data store; ferry \(verb) reads bundles and backends. Describe the store with ferry inspect, "
                    + "or copy it into a bundle first")
        case .archiveCache(let path):
            throw TransferError(
                .unsupported,
                "\(path) is a plist or keyed-archive cache; ferry \(verb) reads bundles and backends. Look at it with ferry inspect "
                    + "or ferry convert, or copy it into a bundle first")
        }
    }
}
