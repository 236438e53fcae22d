import ArgumentParser
import FerryBackend

extension ConflictPolicy: ExpressibleByArgument {
    /// Parses `--on-conflict` once, where it is given; the parse error names the accepted forms.
    public init?(argument: String) { try? self.init(parsing: argument) }

    public var defaultValueDescription: String { description }

    public static var allValueStrings: [String] { ["client-wins", "server-wins", "newer:FIELD", "fail"] }
}
