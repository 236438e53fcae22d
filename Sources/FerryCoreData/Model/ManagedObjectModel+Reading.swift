extension ManagedObjectModel {
    /// Reads the `contents` XML of an `.xcdatamodel`.
    /// - Parameter file: what to name in errors.
    /// - Throws: ``CoreDataError`` (`invalid-model`) naming the file.
    public init(xcdatamodelContents bytes: [UInt8], file: String) throws(CoreDataError) {
        self = try ModelXMLReader.read(bytes, file: file)
    }

    /// Reads a compiled model: a `.mom` file (an NSKeyedArchiver archive of an `NSManagedObjectModel`).
    public init(compiled bytes: [UInt8], file: String) throws(CoreDataError) {
        self = try CompiledModelReader.read(bytes, file: file)
    }

    /// Reads a store's model cache: the raw DEFLATE bytes of `Z_MODELCACHE.Z_CONTENT`.
    public init(modelCache bytes: [UInt8], file: String) throws(CoreDataError) {
        self = try CompiledModelReader.read(try RawInflate.inflate(bytes, source: file, limit: 64 << 20), file: file)
    }
}
