import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// libpq's password file (`~/.pgpass`, or `PGPASSFILE`), read as libpq reads it.
///
/// Lines of `host:port:database:user:password`, `*` matching anything, `\:` and `\\` escaping; the first line that
/// matches gives the password. A file that its group or others can read is ignored, with a warning, as libpq does.
enum PasswordFile {
    static func lookup(_ path: String, settings: PostgresSettings, warnings: inout [String]) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        guard PrivateFile.openMode(info) == nil else {
            warnings.append(
                "\(path): the password file can be read by its group or others, so it is ignored (as libpq does); chmod 0600 \(path)")
            return nil
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let (host, port): (String, String)
        switch settings.host {
        case .tcp(let name, let number): (host, port) = (name, String(number))
        // libpq matches a socket connection with "localhost".
        case .socket(_, let number): (host, port) = ("localhost", String(number))
        }
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let fields = split(line)
            guard fields.count == 5 else { continue }
            let wanted = [host, port, settings.database, settings.user]
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    /// The fields of a line, split at unescaped colons, with `\:` and `\\` unescaped.
    static func split(_ line: Substring) -> [String] {
        var fields: [String] = []
        var current = ""
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" && fields.count < 4 {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        fields.append(current)
        return fields
    }
}
