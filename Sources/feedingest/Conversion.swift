import Downloads
import Foundation

/// How an option's text becomes its value, and the usage error when the text is not one.
struct Conversion<Value>: Sendable {
    /// The value of `text`, given to the option called `option`; the usage error when it has none.
    let convert: @Sendable (_ text: String, _ option: String) throws(UsageError) -> Value

    init(_ convert: @escaping @Sendable (_ text: String, _ option: String) throws(UsageError) -> Value) {
        self.convert = convert
    }

    /// A conversion by `read`, whose `nil` is the usage error "OPTION needs `expected`, not 'TEXT'" (with `hint`).
    static func needs(_ expected: String, hint: String? = nil, _ read: @escaping @Sendable (String) -> Value?) -> Conversion {
        Conversion { text, option throws(UsageError) in
            guard let value = read(text) else { throw UsageError(message: "\(option) needs \(expected), not '\(text)'", hint: hint) }
            return value
        }
    }
}

extension Conversion<String> {
    /// Any text: a path, a URI, a name.
    static var text: Conversion { Conversion { text, _ in text } }

    /// Text on one line, not empty (it goes into a header).
    static var oneLine: Conversion {
        Conversion { text, option throws(UsageError) in
            guard !text.isEmpty, !text.contains(where: { $0 == "\r" || $0 == "\n" }) else {
                throw UsageError(message: "\(option) needs a one-line value", hint: nil)
            }
            return text
        }
    }
}

extension Conversion<Int> {
    /// A whole number within `range`: "a number from 1 to 256".
    static func number(in range: ClosedRange<Int>) -> Conversion {
        needs("a number from \(range.lowerBound) to \(range.upperBound)") { Int($0).flatMap { range.contains($0) ? $0 : nil } }
    }

    /// A count of `noun` (plural), `minimum` or more: "a number of files (1 or more)".
    static func count(of noun: String, atLeast minimum: Int) -> Conversion {
        needs("a number of \(noun) (\(minimum) or more)") { Int($0).flatMap { $0 >= minimum ? $0 : nil } }
    }
}

extension Conversion<Double> {
    /// A duration in seconds (`90`, `90s`, `15m`, `1.5h`, `1d`; see ``Arguments/seconds(_:)``) that `accepts`.
    static func duration(_ expected: String, accepting accepts: @escaping @Sendable (Double) -> Bool) -> Conversion {
        needs(expected) { Arguments.seconds($0).flatMap { accepts($0) ? $0 : nil } }
    }

    /// A duration of at most a year, 0 allowed: an interval, a grace period.
    static var interval: Conversion {
        duration("a duration (0, 90s, 15m, 1h, 1d)", accepting: { $0 <= 366 * 86_400 })
    }

    /// A number of days above 0, fractions allowed.
    static var days: Conversion {
        needs("a number of days above 0") { Double($0).flatMap { $0 > 0 && $0.isFinite ? $0 : nil } }
    }
}

extension Conversion<Int64> {
    /// A size in bytes (`512k`, `64M`; see ``Arguments/byteCount(_:allowsRate:)``) of at least `minimum`; `allowsRate`
    /// accepts a trailing `/s`.
    static func size(_ expected: String, hint: String? = nil, atLeast minimum: Int64 = 1, allowsRate: Bool = false) -> Conversion {
        needs(expected, hint: hint) { Arguments.byteCount($0, allowsRate: allowsRate).flatMap { $0 >= minimum ? $0 : nil } }
    }
}

extension Conversion<Date> {
    /// A date as `--since` takes it (see ``SinceDate``), relative to the time of reading.
    static var date: Conversion {
        needs("a date", hint: "for example 2026-05-01, 2026-05-01T08:30Z, yesterday or 12h") { SinceDate.parse($0) }
    }
}

extension Conversion<[String]> {
    /// Media types, comma-separated, with wildcards: `audio/*,video/mp4`.
    static var mediaTypes: Conversion {
        needs("media types like audio/*,video/mp4") { text in
            let types = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            return types.isEmpty || types.contains(where: { !$0.contains("/") && $0 != "*" }) ? nil : types
        }
    }
}

extension Conversion<DownloadNaming> {
    /// A template for downloaded files' paths (see ``DownloadNaming``).
    static var naming: Conversion {
        Conversion { text, option throws(UsageError) in
            if let problem = DownloadNaming.problem(with: text) {
                throw UsageError(message: "\(option): \(problem)", hint: "for example '{feed}/{date} {title}.{ext}'")
            }
            return DownloadNaming(template: text)
        }
    }
}
