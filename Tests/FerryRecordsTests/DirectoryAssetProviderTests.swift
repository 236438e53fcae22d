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
        #expect(provider.canProvide(asset))
        let reader = try provider.open(asset)
        #expect(reader.isVerified)
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
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
        #expect(provider.canProvide(asset))
        #expect(!provider.canProvide(Asset(sha256: asset.sha256, size: 99)))
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
