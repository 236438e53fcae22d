/// A compressor between a tar writer and its output file: ``GzipCompressor`` or ``ZstdCompressor``.
///
/// Each compresses beside the thread that frames the entries, so ``ArchiveWriter`` holds one of them, whatever the
/// compression, and hands it every byte of the tar stream.
protocol StreamCompressor: AnyObject {
    /// Appends bytes of the uncompressed stream.
    func write(_ bytes: UnsafeRawBufferPointer) throws

    /// Compresses what is left and ends the compressed stream in the output.
    func close() throws

    /// Stops without ending the stream (the output is to be discarded); nothing more reaches the output.
    func abandon()
}
