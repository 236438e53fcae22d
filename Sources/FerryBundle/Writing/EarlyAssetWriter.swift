import Dispatch
import FerryCore
import FerryDirectIO
import FerryRecords
import FerrySorting
import Synchronization

/// Writes a .tar.zst bundle's larger assets into its file while its records are still being added, so that the disk
/// takes them while the records are read rather than after.
///
/// A bundle's head (tag files, manifests, record files) can be written only once every record is in, and its assets
/// were written after it, a last step that mostly waited for the disk. Here each asset of at least ``AssetCopier/smallest`` bytes
/// is written into the output the first time a record uses it, on a queue of its own: its tar entry (header, content,
/// padding, framed by libarchive through ``TarEntryFraming``), as one frame of raw blocks (``ZstdRawFrame``) when a
/// sample of it does not compress, else as Zstandard frames of at most ``AssetCopier/pieceSize`` bytes of content
/// each. When the records are all in, the bundle writer writes the head before the assets, ended with a skippable
/// frame at a multiple of ``OutputFile/prependUnit`` (``AtomicOutputFile/prepend(atMost:inPlace:_:)``, which shifts
/// the assets' blocks on ext4 and XFS); the rest of the assets and the archive's end follow.
///
/// Where the output's filesystem cannot shift blocks (tmpfs, btrfs, network filesystems), the writer only notes the
/// assets in order (``init(deferringWith:base:mtime:temporaryDirectory:)``) and writes them after the head
/// (``writeDeferred(into:)``), the same entries in the same order: the bundle is the same bytes on every filesystem,
/// without a scratch copy of the assets or sending them to a network filesystem twice.
///
/// The order is the order records first used the assets in, so the bundle depends only on its input. Which assets
/// are written early is decided on the admitting thread by a set of digest prefixes (at most ``limit``, 8 bytes each):
/// an asset whose prefix is there already, or that comes after the limit, is written with the others at the end, in
/// digest order; the list of those written here (``finish()``) is exact.
final class EarlyAssetWriter: @unchecked Sendable {
    /// The most assets written early (a few MB of prefixes).
    static let limit = 1 << 18
    /// Assets waiting for the queue before the admitting thread waits for it.
    private static let backlog = 1 << 12

    /// Where the assets taken go.
    private enum Target {
        /// Into the output, as they are taken.
        case output(OutputFile)
        /// Noted in a scratch list, in order (their digests and sizes, raw), and written after the head.
        case list(directory: TemporaryDirectory, file: OutputFile)
    }

    private let target: Target
    private let provider: any AssetProvider
    /// The bundle's directory in the archive.
    private let base: String
    private let queue = DispatchQueue(label: "ferry.early-assets")
    private let slots = DispatchSemaphore(value: backlog)
    private let failure = Mutex<(any Error)?>(nil)
    /// The queue's: entry framing, compressor, buffers.
    private let framing: TarEntryFraming
    private let encoder: ZstdFrameEncoder
    private var piece: [UInt8] = []
    private var frame: [UInt8] = []
    /// The admitting thread's: prefixes of the digests taken, and the exact list of them.
    private var prefixes: Set<UInt64> = []
    private let taken: ExternalSorter<AssetEntry>
    private let temporaryDirectory: String?
    private var isOpen = true
    /// The assets taken, and their bytes (the admitting thread's).
    private(set) var count = 0
    private(set) var bytes: Int64 = 0

    /// Writes into `output` (from its start), reading assets from `provider`, entries under `base` with modification
    /// time `mtime`.
    convenience init(output: OutputFile, provider: any AssetProvider, base: String, mtime: Int64, temporaryDirectory: String?) throws {
        try self.init(target: .output(output), provider: provider, base: base, mtime: mtime, temporaryDirectory: temporaryDirectory)
    }

    /// Only notes the assets taken (in a scratch file under `temporaryDirectory`, 40 bytes each), for
    /// ``writeDeferred(into:)`` to write after the head.
    convenience init(deferringWith provider: any AssetProvider, base: String, mtime: Int64, temporaryDirectory: String?) throws {
        let directory = try TemporaryDirectory(prefix: Self.scratchPrefix, parent: temporaryDirectory)
        let file = try OutputFile(path: directory.file("order"), exclusive: true, bufferSize: 1 << 16)
        try self.init(
            target: .list(directory: directory, file: file), provider: provider, base: base, mtime: mtime,
            temporaryDirectory: temporaryDirectory)
    }

    private init(target: Target, provider: any AssetProvider, base: String, mtime: Int64, temporaryDirectory: String?) throws {
        self.target = target
        self.provider = provider
        self.base = base
        self.temporaryDirectory = temporaryDirectory
        framing = try TarEntryFraming(mtime: mtime)
        encoder = try ZstdFrameEncoder()
        taken = ExternalSorter(memoryLimit: 1 << 20, prefix: Self.scratchPrefix, temporaryDirectory: temporaryDirectory)
    }

    private static let scratchPrefix = "ferry-early-assets"

    /// Whether the assets are only noted as they are taken, for ``writeDeferred(into:)`` after the head.
    var writesAfterHead: Bool {
        if case .list = target { return true }
        return false
    }

    /// Takes an asset a record uses, unless it is small, taken already (or one with its digest prefix), or the limit is
    /// reached; called on the admitting thread, in the order of the records.
    /// - Returns: whether it will be written here.
    /// - Throws: the error that stopped the queue (an asset that changed, a failed write), or ``CoreError`` when the
    ///   list's scratch file cannot be written.
    @discardableResult
    func offer(_ asset: Asset) throws -> Bool {
        try check()
        guard isOpen, asset.size >= AssetCopier.smallest, prefixes.count < Self.limit,
            prefixes.insert(asset.sha256.prefix64).inserted
        else { return false }
        let entry = AssetEntry(digest: asset.sha256, size: asset.size)
        try taken.append(entry)
        count += 1
        bytes += asset.size
        if case .list(_, let file) = target {
            try withUnsafeBytes(of: entry) { try file.write($0) }
            return true
        }
        slots.wait()
        queue.async { [self] in
            defer { slots.signal() }
            guard case .output(let output) = target, failure.withLock({ $0 == nil }) else { return }
            do {
                try write(asset, into: output)
            } catch {
                failure.withLock { $0 = $0 ?? error }
            }
        }
        return true
    }

    /// Waits until every asset taken is written (into the output's buffers; ``OutputFile/flush()`` waits for the
    /// disk), and takes no more.
    /// - Returns: the assets written, sorted by digest.
    /// - Throws: the first error of the queue: an asset that changed or could not be read, a failed write.
    func finish() throws -> ExternalSortedSet<AssetEntry> {
        isOpen = false
        queue.sync {}
        try check()
        prefixes = []
        return try ExternalSortedSet(taking: taken, prefix: Self.scratchPrefix, temporaryDirectory: temporaryDirectory)
    }

    /// Writes the assets only noted (``init(deferringWith:base:mtime:temporaryDirectory:)``) into `output`, in the order
    /// they were taken, as they would have been written as they came; after ``finish()``.
    /// - Throws: ``BundleError`` when an asset changed or cannot be read, ``CoreError`` when the list or the output
    ///   cannot be read or written.
    func writeDeferred(into output: OutputFile) throws {
        guard case .list(let directory, let file) = target else { return }
        try file.close()
        let list = try InputFile(path: file.path)
        var entry = AssetEntry(digest: .zero, size: 0)
        while case let filled = try withUnsafeMutableBytes(of: &entry, { try list.read(filling: $0) }), filled > 0 {
            guard filled == MemoryLayout<AssetEntry>.size else {
                throw BundleError.damagedScratch("the list of assets to write ends in the middle of an entry")
            }
            try write(Asset(sha256: entry.digest, size: entry.size), into: output)
        }
        directory.remove()
    }

    /// Stops: the assets not written yet are dropped, and the queue is idle when this returns.
    func abandon() {
        isOpen = false
        failure.withLock { $0 = $0 ?? BundleError(.writeFailed, "the bundle was abandoned") }
        queue.sync {}
        taken.reset()
        if case .list(let directory, _) = target { directory.remove() }
    }

    private func check() throws {
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// On the queue (or, for assets only noted, the finishing thread): writes an asset's entry, stored raw if a sample
    /// of it does not compress, else compressed.
    private func write(_ asset: Asset, into output: OutputFile) throws {
        let (header, padding) = try framing.frame("\(base)/\(BundleLayout.assetPath(asset.sha256))", size: asset.size)
        try AssetCopier.reading(asset, from: provider) { reader, hasher in
            if try !compresses(asset, reader) {
                try writeRaw(asset, reader, header: header, padding: padding, hasher: &hasher, into: output)
            } else {
                try writeCompressed(asset, reader, header: header, padding: padding, hasher: &hasher, into: output)
            }
        }
    }

    /// Bytes of an asset compressed to decide whether it compresses.
    static let sampleSize = 32 << 10
    /// A sample that does not shrink below this share of its size says the asset does not compress.
    static let compressibleShare = 0.9

    /// Whether the asset compresses: a sample from its middle shrinks by a tenth at Zstandard's level (an asset whose
    /// reader reads only in order counts as one that does).
    private func compresses(_ asset: Asset, _ reader: any AssetReading) throws -> Bool {
        guard let positional = reader as? any PositionalAssetReading else { return true }
        let length = Int(min(Int64(Self.sampleSize), asset.size))
        if piece.count < length { piece = [UInt8](repeating: 0, count: max(length, Int(AssetCopier.pieceSize))) }
        let offset = (asset.size - Int64(length)) / 2
        let read = try piece.withUnsafeMutableBytes { buffer in
            try positional.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<length]), at: offset)
        }
        guard read == length else { throw Self.resized(asset, grew: false) }
        let compressed = try piece.withUnsafeBytes { try encoder.frame(of: UnsafeRawBufferPointer(rebasing: $0[..<length]), into: &frame) }
        return Double(compressed) < Double(length) * Self.compressibleShare
    }

    /// Writes the entry as one frame of raw blocks: the header, the content read straight into the output's buffers,
    /// the padding.
    private func writeRaw(
        _ asset: Asset, _ reader: any AssetReading, header: [UInt8], padding: [UInt8], hasher: inout SHA256Hasher?,
        into output: OutputFile
    ) throws {
        try output.write(ZstdRawFrame.header)
        try writeBlock(header, last: false, into: output)
        var left = asset.size
        while left > 0 {
            let size = Int(min(Int64(ZstdRawFrame.blockSize), left))
            left -= Int64(size)
            let block = ZstdRawFrame.blockHeader(size: size, last: left == 0 && padding.isEmpty)
            try withUnsafeBytes(of: block) { try output.write($0) }
            try output.fill(count: size) { buffer in
                let count = try reader.readBytes(into: buffer)
                guard count > 0 else { throw Self.resized(asset, grew: false) }
                hasher?.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                return count
            }
        }
        try Self.checkEnd(of: reader, asset: asset)
        if !padding.isEmpty { try writeBlock(padding, last: true, into: output) }
    }

    /// Writes a raw block of a few bytes.
    private func writeBlock(_ bytes: [UInt8], last: Bool, into output: OutputFile) throws {
        let block = ZstdRawFrame.blockHeader(size: bytes.count, last: last)
        try withUnsafeBytes(of: block) { try output.write($0) }
        try bytes.withUnsafeBytes { try output.write($0) }
    }

    /// Writes the entry as Zstandard frames of at most ``AssetCopier/pieceSize`` bytes of content each, the header in
    /// the first and the padding in the last.
    private func writeCompressed(
        _ asset: Asset, _ reader: any AssetReading, header: [UInt8], padding: [UInt8], hasher: inout SHA256Hasher?,
        into output: OutputFile
    ) throws {
        let pieceSize = Int(AssetCopier.pieceSize)
        let capacity = header.count + pieceSize + padding.count
        if piece.count < capacity { piece = [UInt8](repeating: 0, count: capacity) }
        var offset: Int64 = 0
        repeat {
            let length = Int(min(Int64(pieceSize), asset.size - offset))
            let used = try piece.withUnsafeMutableBytes { buffer in
                var used = 0
                if offset == 0 {
                    UnsafeMutableRawBufferPointer(rebasing: buffer[..<header.count]).copyBytes(from: header)
                    used = header.count
                }
                let content = UnsafeMutableRawBufferPointer(rebasing: buffer[used..<(used + length)])
                guard try reader.read(filling: content) == length else { throw Self.resized(asset, grew: false) }
                hasher?.update(UnsafeRawBufferPointer(content))
                used += length
                if offset + Int64(length) == asset.size {
                    try Self.checkEnd(of: reader, asset: asset)
                    UnsafeMutableRawBufferPointer(rebasing: buffer[used..<(used + padding.count)]).copyBytes(from: padding)
                    used += padding.count
                }
                return used
            }
            let frameLength = try piece.withUnsafeBytes { try encoder.frame(of: UnsafeRawBufferPointer(rebasing: $0[..<used]), into: &frame) }
            try frame.withUnsafeBytes { try output.write(UnsafeRawBufferPointer(rebasing: $0[..<frameLength])) }
            offset += Int64(length)
        } while offset < asset.size
    }

    /// Checks that the asset has no bytes past its size.
    private static func checkEnd(of reader: any AssetReading, asset: Asset) throws {
        var byte: UInt8 = 0
        let more = try withUnsafeMutableBytes(of: &byte) { try reader.readBytes(into: $0) }
        guard more == 0 else { throw resized(asset, grew: true) }
    }

    private static func resized(_ asset: Asset, grew: Bool) -> BundleError { BundleError.assetResized("asset \(asset.sha256)", grew: grew) }
}
