import CMalloc

/// The process's heap, as the allocator holds it.
public enum ProcessMemory {
    /// Hands memory freed by the program back to the system (glibc keeps freed memory for reuse otherwise), so that a
    /// phase which allocates a lot after one that freed a lot does not add the two peaks up.
    public static func returnFreedMemory() {
        #if canImport(Glibc)
            _ = malloc_trim(0)
        #endif
    }

    /// Has each allocation of at least `bytes` mapped on its own and handed back to the system when freed.
    ///
    /// glibc otherwise raises that threshold to the largest block freed so far (up to 32 MiB), after which large
    /// buffers come from its heaps, where the room they leave when freed stays with the process.
    public static func mapBlocks(ofAtLeast bytes: Int) {
        #if canImport(Glibc)
            _ = mallopt(M_MMAP_THRESHOLD, Int32(clamping: bytes))
        #endif
    }
}
