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

    /// A size in bytes: `500000`, `500k`, `2M`, `1.5G` (1024-based, either case), with an optional `B` or `iB`, and
    /// `/s` when `allowsRate`; `nil` for anything else, and below 1 byte.
    static func byteCount(_ text: String, allowsRate: Bool = false) -> Int64? {
        var number = Substring(text.trimmingCharacters(in: .whitespaces))
        if allowsRate, number.hasSuffix("/s") { number = number.dropLast(2) }
        if number.hasSuffix("iB") { number = number.dropLast(2) } else if number.hasSuffix("B") { number = number.dropLast() }
        let units: [Character: Double] = ["k": 1024, "K": 1024, "m": 1_048_576, "M": 1_048_576, "g": 1_073_741_824, "G": 1_073_741_824]
        var factor = 1.0
        if let last = number.last, let unit = units[last] {
            factor = unit
            number = number.dropLast()
        }
        guard let value = Double(number), value.isFinite, value * factor >= 1, value * factor < 1e15 else { return nil }
        return Int64(value * factor)
    }

    /// Seconds of a duration: `90`, `90s`, `15m`, `1.5h`, `1d`.
    static func seconds(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var number = Substring(text)
        var factor = 1.0
        if let last = number.last, let unit = units[last] {
            factor = unit
            number = number.dropLast()
        }
        guard let value = Double(number), value >= 0, value.isFinite else { return nil }
        return value * factor
    }
}
