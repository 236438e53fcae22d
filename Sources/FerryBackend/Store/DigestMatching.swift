import FerryCore
import FerryRecords

/// A backend that compares content digests itself, so that a copy asks for the versions of only the records that
/// differ (a second copy of the same source asks for none).
public protocol DigestMatching: RecordStore {
    /// The positions in `ids` of the records the backend does not hold live with the content digest at the same
    /// position in `digests` (missing, deleted or different).
    func differing(_ ids: [RecordID], digests: [SHA256Digest]) async throws -> [Int]
}
