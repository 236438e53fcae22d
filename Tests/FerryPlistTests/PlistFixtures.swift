import FerryTesting
import Foundation
import Testing

/// The property lists and archives in `../shared/fixtures`.
enum PlistFixtures {
    /// The fixtures folder, or `nil` (and a printed reason) when `../shared` is absent outside CI.
    static var directory: String? { SharedFixtures.directory }

    /// Every file under the fixtures that is a binary or XML property list (by its first bytes), sorted.
    static var all: [String] {
        guard let directory else { return [] }
        let names = (FileManager.default.enumerator(atPath: directory)?.allObjects as? [String] ?? []).sorted()
        return names.map { "\(directory)/\($0)" }.filter { path in
            guard let handle = FileHandle(forReadingAtPath: path) else { return false }
            defer { try? handle.close() }
            let head = String(decoding: (try? handle.read(upToCount: 256)) ?? Data(), as: UTF8.self)
            return head.hasPrefix("bplist") || (head.contains("<plist") && !head.contains("<model"))
        }
    }

    static func path(_ relative: String) -> String? { directory.map { "\($0)/\(relative)" } }

    static func bytes(_ relative: String) throws -> [UInt8]? {
        guard let path = path(relative) else { return nil }
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }
}
