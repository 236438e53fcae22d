/// Maps an array in contiguous parts on tasks side by side, keeping its order: for a page of independent, CPU-bound
/// work (decoding, hashing) in async code, where a task per element would cost more than the work.
///
/// ```swift
/// let records = try await Parts.map(lines) { try decode($0) }
/// ```
public enum Parts {
    /// `transform` of every element, in order, computed in at most `parts` parts side by side, each of at least
    /// `minimumPart` elements (fewer elements are mapped on the calling task).
    /// - Throws: the first error `transform` throws; the other parts are cancelled.
    public static func map<Element: Sendable, Output: Sendable>(
        _ elements: [Element], parts: Int = OrderedParallelMap.defaultWorkers, minimumPart: Int = 256,
        _ transform: @escaping @Sendable (Element) throws -> Output
    ) async throws -> [Output] {
        let count = min(parts, elements.count / max(1, minimumPart))
        guard count > 1 else { return try elements.map(transform) }
        let size = (elements.count + count - 1) / count
        return try await withThrowingTaskGroup(of: (Int, [Output]).self) { group in
            for part in 0..<count {
                let slice = elements[min(part * size, elements.count)..<min((part + 1) * size, elements.count)]
                group.addTask { (part, try slice.map(transform)) }
            }
            var results = [[Output]](repeating: [], count: count)
            for try await (part, outputs) in group { results[part] = outputs }
            return results.flatMap { $0 }
        }
    }
}
