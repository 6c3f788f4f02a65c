import Foundation

/// The dates `--since` accepts: ISO 8601 dates and date-times, `today`, `yesterday`, and a time ago (`12h`).
enum SinceDate {
    /// The date `text` means, relative to `now` and in `timeZone` when it names no zone; `nil` when it is no date.
    static func parse(_ text: String, now: Date = Date(), timeZone: TimeZone = .current) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        switch text.lowercased() {
        case "now": return now
        case "today": return calendar.startOfDay(for: now)
        case "yesterday": return calendar.date(byAdding: .day, value: -1, to: calendar.startOfDay(for: now))
        default: break
        }
        if let ago = relative(text) { return now.addingTimeInterval(-ago) }
        return iso8601(text, calendar: calendar)
    }

    /// `90s`, `30m`, `12h`, `2d`, `1w` as seconds.
    private static func relative(_ text: String) -> TimeInterval? {
        guard let unit = text.last, let count = Int(text.dropLast()), count >= 0 else { return nil }
        let seconds: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        return seconds[unit].map { Double(count) * $0 }
    }

    /// `YYYY-MM-DD`, then optionally `T` or a space, `HH:MM`, `:SS`, `.fraction`, and `Z` or `±HH:MM` (`±HHMM`, `±HH`).
    private static func iso8601(_ text: String, calendar: Calendar) -> Date? {
        var bytes = Substring(text).utf8[...]
        func number(_ digits: Int) -> Int? {
            guard bytes.count >= digits else { return nil }
            var value = 0
            for byte in bytes.prefix(digits) {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            bytes = bytes.dropFirst(digits)
            return value
        }
        func skip(_ byte: UInt8) -> Bool {
            guard bytes.first == byte else { return false }
            bytes = bytes.dropFirst()
            return true
        }
        var components = DateComponents()
        guard let year = number(4), skip(0x2D), let month = number(2), skip(0x2D), let day = number(2) else { return nil }
        components.year = year
        components.month = month
        components.day = day
        components.hour = 0
        components.minute = 0
        components.second = 0
        var zone = calendar.timeZone
        var fraction = 0.0
        if let separator = bytes.first, separator == 0x54 || separator == 0x74 || separator == 0x20 {
            bytes = bytes.dropFirst()
            guard let hour = number(2), hour < 24, skip(0x3A), let minute = number(2), minute < 60 else { return nil }
            components.hour = hour
            components.minute = minute
            if skip(0x3A) {
                guard let second = number(2), second < 60 else { return nil }
                components.second = second
                if skip(0x2E) || skip(0x2C) {
                    var scale = 0.1
                    var digits = 0
                    while let byte = bytes.first, (0x30...0x39).contains(byte) {
                        fraction += Double(byte - 0x30) * scale
                        scale /= 10
                        digits += 1
                        bytes = bytes.dropFirst()
                    }
                    guard digits > 0 else { return nil }
                }
            }
            if skip(0x5A) || skip(0x7A) {
                zone = TimeZone(secondsFromGMT: 0)!
            } else if let sign = bytes.first, sign == 0x2B || sign == 0x2D {
                bytes = bytes.dropFirst()
                guard let hours = number(2), hours <= 14 else { return nil }
                _ = skip(0x3A)
                let minutes = bytes.isEmpty ? 0 : number(2)
                guard let minutes, minutes < 60 else { return nil }
                let offset = (hours * 3600 + minutes * 60) * (sign == 0x2D ? -1 : 1)
                guard let fixed = TimeZone(secondsFromGMT: offset) else { return nil }
                zone = fixed
            }
        }
        guard bytes.isEmpty else { return nil }
        var zoned = calendar
        zoned.timeZone = zone
        components.timeZone = zone
        guard components.isValidDate(in: zoned), let date = zoned.date(from: components) else { return nil }
        return date.addingTimeInterval(fraction)
    }
}
