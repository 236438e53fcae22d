import Foundation

/// A URL as it may be shown: with its password, if any (in its user part, or as a `password=` parameter), written
/// `****`; any other text as it is.
package enum URLRedaction {
    package static func redacted(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var shown = url
        let authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            shown = String(url[..<authority.index(after: colon)]) + "****" + String(url[at...])
        }
        // Each `password=` parameter's value, up to the next `&` or `#`.
        var result = ""
        var remaining = shown[...]
        while let found = remaining.range(of: "password=") {
            let before = remaining[..<found.lowerBound]
            result += before + "password="
            let value = remaining[found.upperBound...]
            let end = value.firstIndex { $0 == "&" || $0 == "#" } ?? value.endIndex
            let isParameter = before.last == "?" || before.last == "&"
            result += isParameter && end > value.startIndex ? "****" : String(value[..<end])
            remaining = value[end...]
        }
        return result + remaining
    }
}
