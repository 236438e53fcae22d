extension Array {
    /// Calls `body` with each element's index and a pointer to it, lent in place for the call.
    ///
    /// For elements that hold many references (a prepared change): passed as a value, even to a `borrowing` parameter,
    /// an element is copied first, a retain and a release of every reference in it.
    @inlinable
    package func forEachInPlace(_ body: (_ index: Int, _ element: UnsafePointer<Element>) throws -> Void) rethrows {
        try withUnsafeBufferPointer { elements in
            guard let first = elements.baseAddress else { return }
            for index in elements.indices { try body(index, first + index) }
        }
    }
}
