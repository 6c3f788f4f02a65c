/// A small command-line parser: flags, options with values, and positional arguments, with helpful errors.
struct Arguments {
    /// A usage error: a one-line message and a hint; the command exits 2.
    struct UsageError: Error {
        let message: String
        let hint: String?
    }

    /// What a command accepts.
    struct Spec {
        var flags: Set<String> = []
        var options: Set<String> = []
    }

    private(set) var flags: Set<String> = []
    private(set) var options: [String: String] = [:]
    /// Every value of each option, in order, for options that may be repeated (`--feed A --feed B`); ``options`` keeps
    /// the last.
    private(set) var repeatedOptions: [String: [String]] = [:]
    private(set) var positional: [String] = []

    /// Parses `arguments` for a command called `command`. `--` ends options; a lone `-` is positional (stdin).
    init(_ arguments: [String], spec: Spec, command: String) throws(UsageError) {
        var index = 0
        var onlyPositional = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositional || argument == "-" || !argument.hasPrefix("-") {
                positional.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositional = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            if spec.flags.contains(name) {
                guard inlineValue == nil else { throw UsageError(message: "\(name) takes no value", hint: nil) }
                flags.insert(name)
            } else if spec.options.contains(name) {
                if let inlineValue {
                    options[name] = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError(message: "\(name) needs a value", hint: nil) }
                    options[name] = arguments[index]
                    index += 1
                }
                repeatedOptions[name, default: []].append(options[name]!)
            } else {
                let known = spec.flags.union(spec.options).sorted()
                let suggestion = Self.closest(to: name, in: known)
                throw UsageError(message: "unknown option '\(name)' for '\(command)'",
                                 hint: suggestion.map { "did you mean '\($0)'?" } ?? "see 'feedingest \(command) --help'")
            }
        }
    }

    /// The known name nearest to `name` by edit distance, if it is close enough to be a typo.
    static func closest(to name: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, distance(Array(name), Array($0))) }.min { $0.1 < $1.1 }
        guard let (best, score) = scored, score <= max(2, best.count / 3) else { return nil }
        return best
    }

    private static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
