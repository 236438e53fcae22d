import Foundation

/// Hides passwords given on the command line from other processes.
///
/// `ps` and `/proc/PID/cmdline` show a process's arguments as they lie in its memory; a URL's password
/// (`postgres://user:PASSWORD@host/db`, or `password=` as a parameter) is overwritten there with `*`, after the parser
/// has taken its own copy. Until this runs (a few milliseconds after start) the password is visible: PGPASSWORD or
/// `~/.pgpass` keep it off the command line altogether.
enum ArgumentScrubber {
    static func hidePasswords() {
        _ = CommandLine.arguments  // the copy the parser reads, taken before the memory is changed
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let count = strlen(argument)
            let bytes = UnsafeMutableBufferPointer(start: UnsafeMutableRawPointer(argument).assumingMemoryBound(to: UInt8.self), count: count)
            for range in passwordRanges(in: UnsafeBufferPointer(bytes)) {
                for offset in range { bytes[offset] = UInt8(ascii: "*") }
            }
        }
    }

    /// Where the passwords of a URL lie in an argument: between the user's `:` and the `@` of its authority, and
    /// after `password=` among its parameters.
    static func passwordRanges(in bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        let text = Array(bytes)
        guard let schemeEnd = find(Array("://".utf8), in: text, from: 0) else { return [] }
        var ranges: [Range<Int>] = []
        let authorityStart = schemeEnd + 3
        let authorityEnd =
            text[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? text.count
        if let at = text[authorityStart..<authorityEnd].lastIndex(of: UInt8(ascii: "@")),
            let colon = text[authorityStart..<at].firstIndex(of: UInt8(ascii: ":")), colon + 1 < at
        {
            ranges.append((colon + 1)..<at)
        }
        var from = authorityEnd
        while let found = find(Array("password=".utf8), in: text, from: from) {
            let start = found + "password=".utf8.count
            let end = text[start...].firstIndex { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "#") } ?? text.count
            if start < end { ranges.append(start..<end) }
            from = end
        }
        return ranges
    }

    private static func find(_ needle: [UInt8], in text: [UInt8], from start: Int) -> Int? {
        guard text.count >= needle.count, start <= text.count - needle.count else { return nil }
        for index in start...(text.count - needle.count) where Array(text[index..<(index + needle.count)]) == needle { return index }
        return nil
    }
}
