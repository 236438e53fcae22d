extension JSONParser {
    /// Parses a document that is one object, handing each element of the array at `key` to `element` as it is read
    /// instead of keeping it: a long list (a bundle's files, its zones) is never held as values.
    ///
    /// Repeated keys are refused, as ``parse(_:maxDepth:)`` refuses them.
    /// - Parameter element: each element of the array at `key`, with its index.
    /// - Returns: the other members, with `key` an empty array when it was one (kept as it was otherwise); `nil` when
    ///   the document is not an object.
    /// - Throws: ``JSONSyntaxError``, or what `element` throws.
    public static func parseObject(_ bytes: [UInt8], streaming key: String, element: (JSONValue, Int) throws -> Void) throws -> JSONObject? {
        try bytes.withUnsafeBytes { raw in
            var scanner = JSONScanner(raw)
            guard try scanner.peek() == .object else { return nil }
            var object = JSONObject()
            try scanner.beginObject()
            var first = true
            while let name = try scanner.nextKey(&first) {
                let offset = scanner.offset
                guard object[name] == nil else { throw scanner.duplicate(name, at: offset) }
                guard name == key, try scanner.peek() == .array else {
                    object[name] = try scanner.value()
                    continue
                }
                try scanner.beginArray()
                var firstElement = true
                var index = 0
                while try scanner.nextElement(&firstElement) {
                    try element(try scanner.value(), index)
                    index += 1
                }
                object[name] = .array([])
            }
            try scanner.finish()
            return object
        }
    }
}
