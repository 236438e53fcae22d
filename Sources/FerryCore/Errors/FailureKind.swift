/// The class of a failure, which decides the process exit code.
///
/// Library code never exits; it throws errors whose ``FailureKind`` the command-line tool maps to one exit code in
/// one place (see `ExitCodes.swift` in the `ferry` target). The classes follow `sysexits.h`, as restic and borg do.
public enum FailureKind: String, Sendable, Hashable, CaseIterable {
    /// The command line was wrong (exit 64).
    case usage
    /// The input is corrupt, malformed or hostile: a bad bundle, an unreadable store (exit 65).
    case dataError
    /// An input file or directory does not exist or cannot be opened (exit 66).
    case noInput
    /// A backend could not be reached (exit 69).
    case unavailable
    /// Ferry itself failed: an I/O error on output, a broken invariant (exit 70).
    case software
    /// Output could not be created (exit 73).
    case cannotCreate
    /// A temporary failure: retries exhausted, throttled (exit 75).
    case temporary
    /// Permission or authentication was refused (exit 77).
    case permission
    /// A configuration file or mapping is invalid (exit 78).
    case config
    /// The user interrupted the run (exit 130).
    case interrupted
}
