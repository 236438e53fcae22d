import FerryCore
import FerryRecords
import FerrySorting

/// Writes a bundle's assets into its archive, in digest order, reading each from its provider again.
///
/// An asset is copied through the ``EntryCopier`` on the writing thread, hashed on the way unless its reader vouches
/// for its bytes, and its source is checked unchanged at the end. In a .tar.zst, an asset of 64 KiB or more whose
/// provider reads at any offset (``PositionalAssetReading``) and vouches for its bytes is cut into pieces of 1 MiB
/// instead; a worker reads each piece and compresses it into one Zstandard frame (``ZstdFrameEncoder``), and the
/// frames are appended in order (``ArchiveWriter/appendCompressed(size:_:)``). The writing thread then only appends
/// frames: reading each file, copying it into the compressor and waiting for it ran there before, and were most of the
/// time a bundle's assets took. At most four pieces a worker are in flight (a few MB whatever the assets' sizes), and a
/// frame depends only on its bytes, so the bundle is the same for any number of workers. An asset of at most a piece
/// from a provider that fetches by requests (``FetchingAssetProvider``) is opened and read by a worker, several at once,
/// and written whole.
///
/// ```swift
/// try AssetCopier(provider: assets, copier: copier, base: base, workers: 2).copy(catalog)
/// ```
final class AssetCopier {
    /// Assets smaller than this are copied whole: a frame each would cost more than it saves.
    static let smallest: Int64 = 64 << 10
    /// The bytes of each piece (and so of each frame's content).
    static let pieceSize: Int64 = 1 << 20
    /// The most assets copied whole in one item of work.
    private static let wholesPerItem = 256

    private let provider: (any AssetProvider)?
    private let copier: EntryCopier
    /// The bundle's directory in the archive.
    private let base: String
    private let workers: Int
    /// Frame encoders for the workers, made as needed (at most one per worker) and reused.
    private let encoders = ReusePool<ZstdFrameEncoder>()

    /// A copier into `copier`'s archive under `base`, reading from `provider` (`nil` when the bundle has no source of
    /// asset bytes), with `workers` threads for pieces (1 runs everything on the calling thread).
    init(provider: (any AssetProvider)?, copier: EntryCopier, base: String, workers: Int) {
        self.provider = provider
        self.copier = copier
        self.base = base
        self.workers = max(1, workers)
    }

    /// Copies every asset of `catalog` (sorted by digest) but those of `written` (the archive holds them already).
    /// - Throws: ``BundleError`` when an asset cannot be read again or changed, or the archive cannot be written.
    func copy(_ catalog: ExternalSortedSet<AssetEntry>, except written: ExternalSortedSet<AssetEntry>? = nil) throws {
        let cursor = catalog.makeCursor(notIn: written)
        guard copier.archive.takesCompressedContent, let provider else {
            while let entry = try cursor.next() { try copyWhole(Asset(sha256: entry.digest, size: entry.size)) }
            return
        }
        try copyInPieces(cursor, from: provider)
    }

    /// The asset's entry in the archive.
    private func path(of asset: Asset) -> String { "\(base)/\(BundleLayout.assetPath(asset.sha256))" }

    /// Copies an asset on this thread, hashing it on the way unless its reader vouches for its bytes.
    private func copyWhole(_ asset: Asset) throws {
        guard let provider else { throw BundleError(.missingAsset, "no asset source for \(asset.sha256)") }
        try Self.reading(asset, from: provider) { reader, hasher in
            try copier.copy(to: path(of: asset), size: asset.size) { buffer in
                let count = try reader.readBytes(into: buffer)
                hasher?.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                return count
            }
        }
    }

    /// Opens an asset again and hands `body` its reader, with a hasher for the bytes it reads unless the reader
    /// vouches for them; then checks that the source did not change and, if hashed, has the asset's digest.
    /// - Throws: ``BundleError`` (`assetChanged`) when the asset cannot be read again, changed or is not its digest;
    ///   what `body` throws.
    static func reading(
        _ asset: Asset, from provider: any AssetProvider, _ body: (any AssetReading, inout SHA256Hasher?) throws -> Void
    ) throws {
        let reader = try open(asset, from: provider)
        var hasher: SHA256Hasher? = reader.isVerified ? nil : SHA256Hasher()
        do {
            try body(reader, &hasher)
        } catch let error as BundleError where error.code == .assetChanged {
            // Fewer or more bytes than the asset's size: a reader that checks its own source says first whether that
            // source is damaged (a backend's stored asset), which no second run would change.
            try finish(reader)
            throw error
        }
        try finish(reader)
        if let hasher, hasher.finalize() != asset.sha256 { throw BundleError.assetNotItsDigest(asset.sha256) }
    }

    /// One piece of an asset, read and compressed by a worker.
    private struct Piece: Sendable {
        var asset: Asset
        var reader: any PositionalAssetReading
        var offset: Int64
        var length: Int
        var isFirst: Bool { offset == 0 }
        var isLast: Bool { offset + Int64(length) == asset.size }

        /// The first piece of an asset (of at least ``AssetCopier/smallest`` bytes).
        static func first(of asset: Asset, reader: any PositionalAssetReading) -> Piece {
            Piece(asset: asset, reader: reader, offset: 0, length: Int(min(pieceSize, asset.size)))
        }

        /// The piece after this one; `nil` after the last.
        var next: Piece? {
            let offset = offset + Int64(length)
            guard offset < asset.size else { return nil }
            return Piece(asset: asset, reader: reader, offset: offset, length: Int(min(pieceSize, asset.size - offset)))
        }
    }

    private enum Work: Sendable {
        case piece(Piece)
        /// An asset of at most a piece from a provider that fetches it by requests: opened and read whole into memory
        /// by a worker, so that fetching several overlaps, and written by the writing thread as an asset copied whole
        /// is (the same bytes in the archive).
        case read(Asset)
        /// Assets copied whole, several to an item: an item costs a hand-over to a worker and back, which 400 000
        /// small assets one by one made the slowest part of their bundle.
        case wholes([Asset])
    }

    private enum Done: Sendable {
        case frame(Piece, [UInt8])
        case read(Asset, [UInt8])
        case wholes([Asset])
        case failed(any Error)
    }

    /// Copies the larger assets in pieces compressed on workers, and the others whole, all in digest order.
    private func copyInPieces(_ cursor: ExternalSortedSet<AssetEntry>.DifferenceCursor, from provider: any AssetProvider) throws {
        var current: Piece?
        /// An asset taken from the cursor, to start the next item with.
        var held: AssetEntry?
        let encoders = self.encoders
        let fetches = provider is any FetchingAssetProvider
        try OrderedParallelMap.run(
            workers: workers, window: 4 * workers,
            produce: { () throws -> Work? in
                current = current?.next
                if let current { return .piece(current) }
                var wholes: [Asset] = []
                while wholes.count < Self.wholesPerItem {
                    guard let entry = try held ?? cursor.next() else { break }
                    held = nil
                    let asset = Asset(sha256: entry.digest, size: entry.size)
                    if fetches, asset.size <= Self.pieceSize {
                        // The assets gathered so far go first, in their turn.
                        guard wholes.isEmpty else {
                            held = entry
                            break
                        }
                        return .read(asset)
                    }
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
                        // Hashed on the way, or read only in order: copied whole, which opens it again.
                        wholes.append(asset)
                        continue
                    }
                    let first = Piece.first(of: asset, reader: positional)
                    current = first
                    return .piece(first)
                }
                return wholes.isEmpty ? nil : .wholes(wholes)
            },
            transform: { (work: Work) -> Done in
                switch work {
                case .wholes(let assets): return .wholes(assets)
                case .read(let asset):
                    do {
                        return .read(asset, try Self.readWhole(asset, from: provider))
                    } catch {
                        return .failed(error)
                    }
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
                case .wholes(let assets): for asset in assets { try copyWhole(asset) }
                case .read(let asset, let bytes):
                    var offset = 0
                    try copier.copy(to: path(of: asset), size: asset.size) { buffer in
                        let count = min(buffer.count, bytes.count - offset)
                        bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count])) }
                        offset += count
                        return count
                    }
                case .frame(let piece, let frame):
                    let path = self.path(of: piece.asset)
                    if piece.isFirst { try copier.archive.beginFile(path, size: piece.asset.size) }
                    try copier.archive.appendCompressed(size: Int64(piece.length)) { emit in try frame.withUnsafeBytes(emit) }
                    copier.advance(by: Int64(piece.length))
                    if piece.isLast { try Self.finish(piece.reader) }
                }
            })
    }

    /// Opens an asset again, to copy it.
    private static func open(_ asset: Asset, from provider: any AssetProvider) throws -> any AssetReading {
        do {
            return try provider.open(asset)
        } catch {
            throw BundleError(.assetChanged, "asset \(asset.sha256) could not be read again: \(error)", cause: error)
        }
    }

    /// Checks, after an asset's last byte, that its source did not change while it was copied.
    private static func finish(_ reader: any AssetReading) throws {
        do {
            try reader.finish()
        } catch let error as any FerryError where error.kind == .dataError {
            // The source is damaged (a backend's asset that is not its digest): said as it is, not as a change.
            throw error
        } catch {
            throw BundleError(.assetChanged, "\(error)", cause: error)
        }
    }

    /// On a worker: opens and reads an asset whole, checked as ``reading(_:from:_:)`` checks every asset it copies.
    private static func readWhole(_ asset: Asset, from provider: any AssetProvider) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try reading(asset, from: provider) { reader, hasher in
            // One byte of room more than the asset's size, to tell an asset that grew.
            var filled = 0
            bytes = try [UInt8](unsafeUninitializedCapacity: Int(asset.size) + 1) { buffer, count in
                let room = UnsafeMutableRawBufferPointer(buffer)
                while filled < room.count {
                    let read = try reader.readBytes(into: UnsafeMutableRawBufferPointer(rebasing: room[filled...]))
                    if read == 0 { break }
                    filled += read
                }
                count = min(filled, Int(asset.size))
            }
            guard filled == asset.size else { throw BundleError.assetResized("asset \(asset.sha256)", grew: filled > asset.size) }
            hasher?.update(bytes)
        }
        return bytes
    }

    /// On a worker: reads a piece and compresses it into one frame.
    private static func compress(_ piece: Piece, encoders: ReusePool<ZstdFrameEncoder>) throws -> [UInt8] {
        var filled = 0
        let bytes = try [UInt8](unsafeUninitializedCapacity: piece.length) { buffer, count in
            // A positional read returns fewer bytes only at the end of the file.
            filled = try piece.reader.read(into: UnsafeMutableRawBufferPointer(buffer), at: piece.offset)
            count = filled
        }
        guard filled == piece.length else { throw BundleError.assetResized("asset \(piece.asset.sha256)", grew: false) }
        let encoder = try encoders.take { try ZstdFrameEncoder() }
        defer { encoders.give(encoder) }
        return try bytes.withUnsafeBytes { try encoder.frame(of: $0) }
    }
}
