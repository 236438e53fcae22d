import ArgumentParser
import FerryCore

/// Ferry's exit codes: the one place where failures become process exit statuses.
///
/// | code | meaning |
/// |---|---|
/// | 0 | success |
/// | 1 | finished, but some records were rejected (see the reject file) |
/// | 64 | usage: bad flags or arguments, or an output that would replace an input |
/// | 65 | data error: corrupt, malformed or hostile input |
/// | 66 | an input file does not exist |
/// | 69 | a backend is unavailable |
/// | 70 | internal error |
/// | 73 | the output cannot be created |
/// | 75 | temporary failure: retries exhausted (throttled, a lost connection), a database server out of connections, disk or memory, a zone another copy writes (`--no-wait`), a file changed during the run |
/// | 77 | permission or authentication refused |
/// | 78 | configuration error (a schema made by a newer Ferry, a database server that takes no writes) |
/// | 130 | interrupted (SIGINT); 143 for SIGTERM |
enum ExitCodes {
    static let success: Int32 = 0
    static let rejected: Int32 = 1
    static let usage: Int32 = 64
    static let interrupted: Int32 = 130
    static let terminated: Int32 = 143

    /// The exit code of a failure class.
    static func code(for kind: FailureKind) -> Int32 {
        switch kind {
        case .usage: 64
        case .dataError: 65
        case .noInput: 66
        case .unavailable: 69
        case .software: 70
        case .cannotCreate: 73
        case .temporary: 75
        case .permission: 77
        case .config: 78
        case .interrupted: 130
        }
    }

    /// The exit code of any error.
    static func code(for error: any Error) -> Int32 {
        if let ferry = error as? any FerryError { return code(for: ferry.kind) }
        return 70
    }
}
