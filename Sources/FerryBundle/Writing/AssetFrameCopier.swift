import FerryCore
import FerryRecords

/// Copies a .tar.zst bundle's assets, reading and compressing the larger ones on worker threads.
///
/// An asset of 64 KiB or more whose provider reads at any offset (``PositionalAssetReading``) and vouches for its bytes
/// is cut into pieces of 1 MiB; a worker reads each piece and compresses it into one Zstandard frame
/// (``ZstdFrameEncoder``), and the frames are appended in order (``ArchiveWriter/appendCompressed(size:_:)``). The
/// thread that writes the archive then only appends frames: reading each file, copying it into the compressor and
/// waiting for it ran there before, and were most of the time a bundle's assets took. Any other asset is copied the
/// usual way, in its turn. At most `window` pieces are in flight (a few MB whatever the assets' sizes), and a frame
/// depends only on its bytes, so the bundle is the same for any number of workers.
///
/// ```swift
/// let frames = AssetFrameCopier(provider: assets, workers: 2)
/// try frames.copy(catalog, base: base, copier: copier) { asset in try copyAsset(asset) }
/// ```
final class AssetFrameCopier {
    /// Assets smaller than this go the usual way: a frame each would cost more than it saves.
    static let smallest: Int64 = 64 << 10
    /// The bytes of each piece (and so of each frame's content).
    static let pieceSize: Int64 = 1 << 20

    private let provider: any AssetProvider
    private let workers: Int
    /// Frame encoders for the workers, made as needed (at most one per worker) and reused.
    private let encoders = ReusePool<ZstdFrameEncoder>()

    /// A copier that reads from `provider` on `workers` threads (1 runs everything on the calling thread).
    init(provider: any AssetProvider, workers: Int) {
        self.provider = provider
        self.workers = max(1, workers)
    }

    /// One piece of an asset, read and compressed by a worker.
    private struct Piece: Sendable {
        var asset: Asset
        var reader: any PositionalAssetReading
        var offset: Int64
        var length: Int
        var isFirst: Bool { offset == 0 }
        var isLast: Bool { offset + Int64(length) == asset.size }
    }

    private enum Work: Sendable {
        case piece(Piece)
        /// Assets copied the usual way, several to an item: an item costs a hand-over to a worker and back, which
        /// 400 000 small assets one by one made the slowest part of their bundle.
        case wholes([Asset])
    }

    private enum Done: Sendable {
        case frame(Piece, [UInt8])
        case wholes([Asset])
        case failed(any Error)
    }

    /// The most assets in one ``Work/wholes(_:)`` item.
    private static let wholesPerItem = 256

    /// Copies every asset of `catalog` (sorted by digest) into the archive behind `copier`, under `base`.
    /// - Parameter whole: copies an asset the usual way, on the calling thread.
    /// - Throws: ``BundleError`` when an asset cannot be read again or changed, or what `whole` throws.
    func copy(
        _ catalog: ExternalSortedSet<AssetEntry>, base: String, copier: EntryCopier, whole: (Asset) throws -> Void
    ) throws {
        let cursor = catalog.makeCursor()
        var current: Piece?
        /// An asset taken from the cursor, to start the next item with.
        var held: AssetEntry?
        let encoders = self.encoders
        try OrderedParallelMap.run(
            workers: workers, window: 4 * workers,
            produce: { () throws -> Work? in
                if let piece = current {
                    let next = Self.piece(of: piece.asset, reader: piece.reader, after: piece)
                    current = next
                    if let next { return .piece(next) }
                }
                var wholes: [Asset] = []
                while wholes.count < Self.wholesPerItem {
                    guard let entry = try held ?? cursor.next() else { break }
                    held = nil
                    let asset = Asset(sha256: entry.digest, size: entry.size)
                    guard asset.size >= Self.smallest else {
                        wholes.append(asset)
                        continue
                    }
                    // The assets gathered so far go first, in their turn.
                    guard wholes.isEmpty else {
                        held = entry
                        break
                    }
                    let reader = try Self.open(asset, from: provider)
                    guard reader.isVerified, let positional = reader as? any PositionalAssetReading else {
                        // Hashed on the way, or read only in order: the usual way opens it again.
                        wholes.append(asset)
                        continue
                    }
                    current = Self.piece(of: asset, reader: positional, after: nil)
                    return current.map { .piece($0) }
                }
                return wholes.isEmpty ? nil : .wholes(wholes)
            },
            transform: { (work: Work) -> Done in
                switch work {
                case .wholes(let assets): return .wholes(assets)
                case .piece(let piece):
                    do {
                        return .frame(piece, try Self.compress(piece, encoders: encoders))
                    } catch {
                        return .failed(error)
                    }
                }
            },
            consume: { (done: consuming Done) in
                switch done {
                case .failed(let error): throw error
                case .wholes(let assets): for asset in assets { try whole(asset) }
                case .frame(let piece, let frame):
                    let path = "\(base)/\(BundleLayout.assetPath(piece.asset.sha256))"
                    if piece.isFirst { try copier.archive.beginFile(path, size: piece.asset.size) }
                    try copier.archive.appendCompressed(size: Int64(piece.length)) { emit in try frame.withUnsafeBytes(emit) }
                    copier.advance(by: Int64(piece.length))
                    if piece.isLast {
                        do {
                            try piece.reader.finish()
                        } catch {
                            throw BundleError(.assetChanged, "\(error)", cause: error)
                        }
                    }
                }
            })
    }

    /// The piece after `previous` (the first when `nil`); `nil` after the last.
    private static func piece(of asset: Asset, reader: any PositionalAssetReading, after previous: Piece?) -> Piece? {
        let offset = previous.map { $0.offset + Int64($0.length) } ?? 0
        guard offset < asset.size else { return nil }
        return Piece(asset: asset, reader: reader, offset: offset, length: Int(min(pieceSize, asset.size - offset)))
    }

    private static func open(_ asset: Asset, from provider: any AssetProvider) throws -> any AssetReading {
        do {
            return try provider.open(asset)
        } catch {
            throw BundleError(.assetChanged, "asset \(asset.sha256) could not be read again: \(error)", cause: error)
        }
    }

    /// On a worker: reads a piece and compresses it into one frame.
    private static func compress(_ piece: Piece, encoders: ReusePool<ZstdFrameEncoder>) throws -> [UInt8] {
        var filled = 0
        let bytes = try [UInt8](unsafeUninitializedCapacity: piece.length) { buffer, count in
            let target = UnsafeMutableRawBufferPointer(buffer)
            while filled < piece.length {
                let read = try piece.reader.read(
                    into: UnsafeMutableRawBufferPointer(rebasing: target[filled...]), at: piece.offset + Int64(filled))
                if read == 0 { break }
                filled += read
            }
            count = filled
        }
        guard filled == piece.length else {
            throw BundleError(.assetChanged, "asset \(piece.asset.sha256) shrank while it was being written; run again")
        }
        let encoder = try encoders.take { try ZstdFrameEncoder() }
        defer { encoders.give(encoder) }
        return try bytes.withUnsafeBytes { try encoder.frame(of: $0) }
    }
}
