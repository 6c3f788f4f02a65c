/// `--name value` pairs and `--flag`s, parsed by hand: the command lines of the small helper and benchmark
/// executables (StoreProbe, feedingest-store-bench), which have no dependency but the package's own targets.
public struct CommandOptions: Sendable {
    /// `--name value` pairs, by name.
    public private(set) var values: [String: String] = [:]
    /// The flags given.
    public private(set) var flags: Set<String> = []

    /// Parses `arguments`; the names in `flagNames` take no value, every other `--name` takes the next argument.
    public init(_ arguments: ArraySlice<String>, flagNames: Set<String> = []) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            guard argument.hasPrefix("--") else { continue }
            let name = String(argument.dropFirst(2))
            if flagNames.contains(name) { flags.insert(name) } else { values[name] = iterator.next() }
        }
    }

    /// The integer value of `--name`, or `fallback`.
    public func int(_ name: String, _ fallback: Int) -> Int { values[name].flatMap { Int($0) } ?? fallback }
}
