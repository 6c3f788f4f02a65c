import Foundation

/// A usage error: a one-line message and a hint; the command exits 2.
struct UsageError: Error, Equatable {
    let message: String
    let hint: String?
}

/// A command line read against a command's ``OptionTable``: the options given, with their values as text, and the
/// positional arguments. The values become typed through each option's ``Conversion`` when the command reads them.
struct Arguments {
    /// The table the command line was read against.
    let table: OptionTable
    /// The flags given, by name.
    private var flags: Set<String> = []
    /// Every value of each option given, in order, by name.
    private var texts: [String: [String]] = [:]
    /// The arguments that are not options, in order.
    private(set) var positional: [String] = []

    /// Reads `arguments` for the command called `command`, which accepts what `table` lists. `--` ends the options; a
    /// lone `-` is positional (stdin). A value follows its option or is joined to it by `=` (`--jobs=4`).
    init(_ arguments: [String], table: OptionTable, command: String) throws(UsageError) {
        self.table = table
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
            guard let option = table.option(named: name) else {
                let suggestion = Self.closest(to: name, in: table.names)
                throw UsageError(message: "unknown option '\(name)' for '\(command)'",
                                 hint: suggestion.map { "did you mean '\($0)'?" } ?? "see 'feedingest \(command) --help'")
            }
            if !option.takesValue {
                guard inlineValue == nil else { throw UsageError(message: "\(name) takes no value", hint: nil) }
                flags.insert(option.name)
            } else if let inlineValue {
                texts[option.name, default: []].append(inlineValue)
            } else {
                guard index < arguments.count else { throw UsageError(message: "\(name) needs a value", hint: nil) }
                texts[option.name, default: []].append(arguments[index])
                index += 1
            }
        }
    }

    /// Whether `option`, flag or value, was given.
    func contains(_ option: Option) -> Bool {
        precondition(table.contains(option), "\(option.name) is not in the table")
        return flags.contains(option.name) || texts[option.name] != nil
    }

    /// Whether `flag` was given.
    func contains(_ flag: Flag) -> Bool {
        precondition(table.contains(flag.option), "\(flag.option.name) is not in the table")
        return flags.contains(flag.option.name)
    }

    /// Whether `option` was given.
    func contains<Value>(_ option: ValueOption<Value>) -> Bool { text(option) != nil }

    /// The text of `option` as given (the last one given), without conversion; `nil` when it was not given.
    func text<Value>(_ option: ValueOption<Value>) -> String? {
        precondition(table.contains(option.option), "\(option.option.name) is not in the table")
        return texts[option.option.name]?.last
    }

    /// The value of `option` (the last one given); `nil` when it was not given.
    ///
    /// - Throws: the option's usage error when its text is not a value.
    func value<Value>(_ option: ValueOption<Value>) throws(UsageError) -> Value? {
        guard let text = text(option) else { return nil }
        return try option.conversion.convert(text, option.option.name)
    }

    /// Every value of `option`, in the order given (a repeatable option's); empty when it was not given.
    ///
    /// - Throws: the option's usage error for the first text that is not a value.
    func values<Value>(_ option: ValueOption<Value>) throws(UsageError) -> [Value] {
        precondition(table.contains(option.option), "\(option.option.name) is not in the table")
        var converted: [Value] = []
        for text in texts[option.option.name] ?? [] { converted.append(try option.conversion.convert(text, option.option.name)) }
        return converted
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
