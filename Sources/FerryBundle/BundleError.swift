import FerryCore

/// An error reading, verifying or writing a bundle.
public struct BundleError: FerryError {
    /// What kind of bundle failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case notABundle = "not-a-bundle"
            case corruptArchive = "corrupt-archive"
            case unsafeEntry = "unsafe-entry"
            case duplicateEntry = "duplicate-entry"
            case entryTooLarge = "entry-too-large"
            case checksumMismatch = "checksum-mismatch"
            case missingEntry = "missing-entry"
            case unlistedEntry = "unlisted-entry"
            case payloadOxumMismatch = "payload-oxum-mismatch"
            case unsupportedVersion = "unsupported-version"
            case invalidMetadata = "invalid-metadata"
            case invalidRecord = "invalid-record"
            case missingAsset = "missing-asset"
            case readFailed = "read-failed"
            case writeFailed = "write-failed"
            case assetChanged = "asset-changed"
            case targetExists = "target-exists"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The file is not a Ferry bundle (no `bagit.txt`, or not an archive at all).
        public static let notABundle = Code(.notABundle)
        /// libarchive could not read the archive: damaged or truncated.
        public static let corruptArchive = Code(.corruptArchive)
        /// An entry is an absolute path, climbs out with `..`, or is a link or device.
        public static let unsafeEntry = Code(.unsafeEntry)
        /// The same path appears twice.
        public static let duplicateEntry = Code(.duplicateEntry)
        /// An entry is larger than its declared size.
        public static let entryTooLarge = Code(.entryTooLarge)
        /// A file's SHA-256 differs from the manifest's.
        public static let checksumMismatch = Code(.checksumMismatch)
        /// The manifest lists a file the archive does not contain.
        public static let missingEntry = Code(.missingEntry)
        /// The archive contains a payload file the manifest does not list.
        public static let unlistedEntry = Code(.unlistedEntry)
        /// The payload's byte or file count differs from `Payload-Oxum`.
        public static let payloadOxumMismatch = Code(.payloadOxumMismatch)
        /// The bundle was written by a newer format version.
        public static let unsupportedVersion = Code(.unsupportedVersion)
        /// A tag file, `manifest.json` or `schema.json` is malformed.
        public static let invalidMetadata = Code(.invalidMetadata)
        /// A record line is malformed, not canonical, or in the wrong file.
        public static let invalidRecord = Code(.invalidRecord)
        /// A record references an asset the bundle does not contain.
        public static let missingAsset = Code(.missingAsset)
        /// Reading an input failed.
        public static let readFailed = Code(.readFailed)
        /// Writing the bundle failed.
        public static let writeFailed = Code(.writeFailed)
        /// An asset file changed while the bundle was being written.
        public static let assetChanged = Code(.assetChanged)
        /// The target of an extraction already exists.
        public static let targetExists = Code(.targetExists)

        public var description: String { "bundle.\(base.rawValue)" }

        var kind: FailureKind {
            switch base {
            case .writeFailed, .targetExists: .cannotCreate
            case .readFailed: .noInput
            case .assetChanged: .temporary
            default: .dataError
            }
        }
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong, where, and how to fix it.
    public var message: String
    /// The underlying error.
    public var cause: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var kind: FailureKind {
        if let cause = cause as? any FerryError, code == .readFailed || code == .writeFailed { return cause.kind }
        return code.kind
    }

    public var codeName: String { code.description }

    /// An asset (or its file, `name`) that has more or fewer bytes than when it was hashed.
    static func assetResized(_ name: String, grew: Bool) -> BundleError {
        BundleError(.assetChanged, "\(name) \(grew ? "grew" : "shrank") while it was being written; run again")
    }

    /// An asset whose bytes, read to write them, do not hash to its digest.
    static func assetNotItsDigest(_ digest: SHA256Digest) -> BundleError {
        BundleError(.assetChanged, "asset file for \(digest) does not have that SHA-256 (it changed or is corrupt)")
    }

    /// A scratch file of the run that does not read back as it was written: `what` is wrong with it.
    static func damagedScratch(_ what: String) -> BundleError {
        BundleError(.readFailed, "\(what); the scratch disk may be failing: run again, with --temp-dir elsewhere")
    }
}
