import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import Testing

@Suite struct DirectoryAssetProviderTests {
    @Test func hashesFilesOnceAndServesThemByContent() throws {
        let scratch = try Scratch()
        try scratch.write("assets/photos/a.jpg", "picture")
        let provider = try DirectoryAssetProvider(root: scratch.file("assets"))
        let asset = try provider.resolve(path: "photos/a.jpg", fileName: nil)
        #expect(asset == Asset(sha256: SHA256Hasher.digest(Array("picture".utf8)), size: 7, fileName: "a.jpg"))
        #expect(try provider.canProvide(asset))
        let reader = try provider.open(asset)
        #expect(reader.isVerified)
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = try buffer.withUnsafeMutableBytes { try reader.readBytes(into: $0) }
        #expect(Array(buffer[0..<count]) == Array("picture".utf8))
        try reader.finish()
        // Named again, with and without a file name of its own: each record gets its own name, the file is not read again.
        #expect(try provider.resolve(path: "photos/a.jpg", fileName: "holiday.jpg").fileName == "holiday.jpg")
        #expect(try provider.resolve(path: "photos/a.jpg", fileName: nil) == asset)
    }

    @Test func findsContentAddressedFilesButVerifiesThemWhenCopied() throws {
        let scratch = try Scratch()
        let asset = try TestBundles.storeAsset(Data("bytes".utf8), in: scratch.file("store"))
        let provider = try DirectoryAssetProvider(root: scratch.file("store"))
        #expect(try provider.canProvide(asset))
        #expect(try !provider.canProvide(Asset(sha256: asset.sha256, size: 99)))
        #expect(try provider.open(asset).isVerified == false)
    }

    @Test(arguments: ["../outside.txt", "/etc/passwd", "photos/../../outside.txt", "missing.jpg", "photos", "link/outside.txt"])
    func refusesPathsOutsideTheDirectoryOrNotFiles(path: String) throws {
        let scratch = try Scratch()
        try scratch.write("outside.txt", "secret")
        try scratch.write("assets/photos/a.jpg", "picture")
        try FileManager.default.createSymbolicLink(atPath: scratch.file("assets/link"), withDestinationPath: scratch.path)
        let provider = try DirectoryAssetProvider(root: scratch.file("assets"))
        #expect(throws: RecordError.self) { try provider.resolve(path: path, fileName: nil) }
    }

    @Test func noticesAFileChangedAfterItWasHashed() throws {
        let scratch = try Scratch()
        try scratch.write("assets/a.bin", "version one")
        let provider = try DirectoryAssetProvider(root: scratch.file("assets"))
        let asset = try provider.resolve(path: "a.bin", fileName: nil)
        Thread.sleep(forTimeInterval: 0.01)
        try scratch.write("assets/a.bin", "version two!")
        #expect(throws: RecordError.self) { try provider.open(asset) }
    }
}

/// The provider's index leaves memory when it grows: with a table of four files, hundreds of files are still each
/// found by content, opened, and named by identity.
@Suite struct DirectoryAssetProviderIndexTests {
    @Test func manyFilesAreFoundThroughTheIndexOnDisk() throws {
        let scratch = try Scratch()
        let count = 300
        for index in 0..<count { try scratch.write("assets/p/\(index).bin", "photo \(index % 250)") }
        try scratch.write("assets/sha256/placeholder", "")
        let byContent = try TestBundles.storeAsset(Data("stored by content".utf8), in: scratch.file("assets"))
        let provider = try DirectoryAssetProvider(root: scratch.file("assets"), temporaryDirectory: scratch.path, tableLimit: 4)
        var assets: [Asset] = []
        for index in 0..<count { assets.append(try provider.resolve(path: "p/\(index).bin", fileName: nil)) }
        // Files 250… repeat the content of files 0…: the same assets.
        #expect(assets[260].sha256 == assets[10].sha256)
        #expect(try provider.canProvide(byContent))
        for (index, asset) in assets.enumerated() {
            #expect(try provider.canProvide(asset))
            #expect(try !provider.canProvide(Asset(sha256: asset.sha256, size: asset.size + 1)))
            let reader = try provider.open(asset)
            var buffer = [UInt8](repeating: 0, count: 64)
            let read = try buffer.withUnsafeMutableBytes { try reader.readBytes(into: $0) }
            #expect(String(decoding: buffer[0..<read], as: UTF8.self) == "photo \(index % 250)")
            try reader.finish()
        }
        #expect(try !provider.canProvide(Asset(sha256: SHA256Hasher.digest(Array("unknown".utf8)), size: 7)))
        let identity = try #require(FileIdentity(path: scratch.file("assets/p/123.bin")))
        #expect(provider.inputDescription(of: identity) == "the asset \(scratch.file("assets"))/p/123.bin")
        // A file named again long after (not among the paths remembered) gives the same asset.
        #expect(try provider.resolve(path: "p/0.bin", fileName: nil) == assets[0])
    }
}
