/// What a copy does when the target holds another version of a record (`--on-conflict`).
///
/// Deletions in the source always delete (deletes win). A record the target deleted is kept deleted under every
/// policy but `client-wins`.
public enum ConflictPolicy: Sendable, Hashable, CustomStringConvertible {
    /// Keep the target's version.
    case serverWins
    /// Write the source's version (the default: a copy makes the target match the source).
    case clientWins
    /// The version whose TIMESTAMP field (such as `lastUpdate`) is newer wins; ties keep the target's.
    case newer(field: String)
    /// Reject the record (listed in the reject file, exit 1).
    case fail

    /// Parses `server-wins`, `client-wins`, `newer:<field>` or `fail`.
    /// - Throws: ``BackendError`` `invalid-policy` naming the accepted forms.
    public init(parsing text: String) throws(BackendError) {
        switch text {
        case "server-wins": self = .serverWins
        case "client-wins": self = .clientWins
        case "fail": self = .fail
        default:
            guard text.hasPrefix("newer:"), text.count > 6 else {
                throw BackendError(.invalidPolicy, "--on-conflict \(text): expected server-wins, client-wins, newer:<field> or fail")
            }
            self = .newer(field: String(text.dropFirst(6)))
        }
    }

    public var description: String {
        switch self {
        case .serverWins: "server-wins"
        case .clientWins: "client-wins"
        case .newer(let field): "newer:\(field)"
        case .fail: "fail"
        }
    }
}
