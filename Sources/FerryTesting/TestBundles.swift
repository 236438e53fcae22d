import FerryBundle
import FerryCore
import FerryRecords
import Foundation

/// Writes bundles from records for tests.
public enum TestBundles {
    /// The fixed creation time test bundles use.
    public static let createdAt = Date(timeIntervalSince1970: 1_700_000_000)

    /// Writes a bundle of `changes` whose assets are files in `assetDirectory`, and returns its summary.
    @discardableResult
    public static func write(
        _ changes: [RecordChange], to path: String, assetDirectory: String? = nil, format: ArchiveFormat? = nil,
        zstdWorkers: Int? = nil, createdAtKnown: Bool = true
    ) throws -> BundleSummary {
        var options = BundleWriter.Options(source: .init(kind: "test", description: "TestBundles"))
        options.format = format
        // Known from the start, as `ferry pack` knows it: a .tar.zst bundle writes its larger assets early.
        if createdAtKnown { options.createdAt = createdAt }
        if let zstdWorkers { options.zstdWorkers = zstdWorkers }
        options.softwareAgent = "ferry-tests"
        let provider = try assetDirectory.map { try DirectoryAssetProvider(root: $0) }
        let writer = try BundleWriter(path: path, options: options, assets: provider)
        for change in changes {
            if case .rejected(let problems) = try writer.add(change) {
                throw CoreError(.readFailed, "test record \(change.recordName) rejected: \(problems)")
            }
        }
        return try writer.finish(createdAt: createdAt)
    }

    /// Stores `bytes` as a content-addressed asset file under `directory` (`sha256/ab/<hex>`) and returns the asset.
    public static func storeAsset(_ bytes: Data, in directory: String, fileName: String? = nil) throws -> Asset {
        let digest = SHA256Hasher.digest(bytes)
        let hex = digest.hex
        let folder = "\(directory)/sha256/\(hex.prefix(2))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try bytes.write(to: URL(fileURLWithPath: "\(folder)/\(hex)"))
        return Asset(sha256: digest, size: Int64(bytes.count), fileName: fileName)
    }

    /// About `count` bytes of compressible, non-repeating text: words picked by a linear congruential generator
    /// started at `seed` (payloads that span many compression chunks and zstd jobs).
    public static func compressibleText(count: Int, seed: UInt64) -> Data {
        let words = ["brake ", "door ", "seat ", "winch ", "tyres ", "oil ", "mirror ", "lift "].map { Array($0.utf8) }
        var text: [UInt8] = []
        text.reserveCapacity(count + 8)
        var state = seed
        while text.count < count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            text += words[Int(state >> 61)]
        }
        return Data(text)
    }
}
