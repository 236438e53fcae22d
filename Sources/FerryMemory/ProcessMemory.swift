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
}
