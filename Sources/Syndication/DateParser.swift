// Feed dates by hand: RFC 822/2822, RFC 3339/ISO 8601/W3CDTF, asctime and common broken forms, and RFC 3339 output.

import Foundation

/// Parses the dates feeds contain, by hand: RFC 822/2822, RFC 3339, ISO 8601, W3CDTF, asctime and the
/// broken forms real feeds use. No `DateFormatter`, no allocation beyond the input's bytes.
///
/// A date without a zone is taken as UTC. Two-digit years follow RFC 2822: 00–49 are 2000–2049, 50–99 are
/// 1950–1999. US zone names (EST, PDT, …) and military letters (A–I, K–Z; J is not a zone) are understood;
/// an unknown zone name is taken as UTC rather than losing the date.
public enum FeedDate {
    /// The moment `text` denotes, or `nil` when it is not a date this parser understands.
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    /// The moment the UTF-8 `bytes` denote.
    public static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var start = 0
        var end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        guard end - start >= 4 else { return nil }
        let trimmed = UnsafeBufferPointer(rebasing: bytes[start..<end])
        if let date = iso8601(trimmed) { return date }
        if let date = rfc822(trimmed) { return date }
        return loose(trimmed)
    }

    /// Formats a date as RFC 3339 in UTC, with milliseconds only when it has them: `2024-05-01T12:00:00Z`.
    public static func rfc3339(_ date: Date) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maximumRFC3339Length) { buffer in
            let length = writeRFC3339(date, to: buffer.baseAddress!)
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<length]), as: UTF8.self)
        }
    }

    /// The longest text ``writeRFC3339(_:to:)`` writes: a sign, 18 year digits, `-MM-DDTHH:MM:SS.mmmZ`.
    static let maximumRFC3339Length = 40

    /// Writes ``rfc3339(_:)``'s text as UTF-8 at `out` (room for ``maximumRFC3339Length`` bytes) without making a
    /// `String` (the article line's dates); returns how many bytes it wrote.
    static func writeRFC3339(_ date: Date, to out: UnsafeMutablePointer<UInt8>) -> Int {
        let interval = date.timeIntervalSince1970
        var seconds = Int64(interval.rounded(.down))
        var millis = Int64((interval - Double(seconds)) * 1000 + 0.5)
        if millis >= 1000 { seconds += 1; millis -= 1000 }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 { secondOfDay += 86_400; days -= 1 }
        let (year, month, day) = civil(fromDays: days)
        var position = 0
        func put(_ byte: UInt8) {
            out[position] = byte
            position += 1
        }
        func digits(_ value: Int64, _ width: Int) {
            var value = value
            for offset in stride(from: width - 1, through: 0, by: -1) {
                out[position + offset] = 0x30 + UInt8(value % 10)
                value /= 10
            }
            position += width
        }
        // The year: at least four digits, more when it has them, a minus sign before a negative one.
        if year < 0 { put(0x2D) }
        var width = 4, limit: Int64 = 10_000
        while abs(year) >= limit && width < 18 { width += 1; limit *= 10 }
        digits(abs(year), width)
        put(0x2D)
        digits(month, 2)
        put(0x2D)
        digits(day, 2)
        put(0x54)
        digits(secondOfDay / 3600, 2)
        put(0x3A)
        digits(secondOfDay / 60 % 60, 2)
        put(0x3A)
        digits(secondOfDay % 60, 2)
        if millis > 0 {
            put(0x2E)
            digits(millis, 3)
        }
        put(0x5A)
        return position
    }

    // MARK: ISO 8601, RFC 3339, W3CDTF

    /// `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, then optionally `T` or a space, `hh:mm[:ss[.fff]]` and a zone;
    /// also the basic forms `YYYYMMDD` and `YYYYMMDDThhmmss`. Fractions may use a comma.
    static func iso8601(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        var i = 0
        func digits(_ count: Int) -> Int? {
            guard i + count <= b.count else { return nil }
            var value = 0
            for k in 0..<count {
                let c = b[i + k]
                guard c >= 0x30 && c <= 0x39 else { return nil }
                value = value * 10 + Int(c - 0x30)
            }
            i += count
            return value
        }
        guard let year = digits(4) else { return nil }
        var month = 1, day = 1
        var basic = false
        if i == b.count { return make(year, 1, 1, 0, 0, 0, 0, 0) }
        if b[i] == 0x2D {  // -
            i += 1
            guard let m = digits(2) else { return nil }
            month = m
            if i < b.count && b[i] == 0x2D {
                i += 1
                guard let d = digits(2) else { return nil }
                day = d
            }
        } else if let m = digits(2), let d = digits(2) {
            month = m
            day = d
            basic = true
        } else {
            return nil
        }
        var hour = 0, minute = 0, second = 0
        var fraction = 0.0
        var offset = 0
        if i < b.count && (b[i] == 0x54 || b[i] == 0x74 || b[i] == 0x20) {  // T t space
            i += 1
            while i < b.count && b[i] == 0x20 { i += 1 }
            guard let h = digits(2) else { return nil }
            hour = h
            if i < b.count && b[i] == 0x3A { i += 1 }
            guard let mi = digits(2) else { return nil }
            minute = mi
            if i < b.count && (b[i] == 0x3A || (basic && b[i] >= 0x30 && b[i] <= 0x39)) {
                if b[i] == 0x3A { i += 1 }
                guard let s = digits(2) else { return nil }
                second = s
                if i < b.count && (b[i] == 0x2E || b[i] == 0x2C) {  // . or ,
                    i += 1
                    var scale = 0.1
                    var any = false
                    while i < b.count && b[i] >= 0x30 && b[i] <= 0x39 {
                        fraction += Double(b[i] - 0x30) * scale
                        scale /= 10
                        i += 1
                        any = true
                    }
                    guard any else { return nil }
                }
            }
            while i < b.count && b[i] == 0x20 { i += 1 }
            if i < b.count {
                if b[i] == 0x5A || b[i] == 0x7A { i += 1 }  // Z
                else if b[i] == 0x2B || b[i] == 0x2D {  // + -
                    let sign = b[i] == 0x2D ? -1 : 1
                    i += 1
                    guard let oh = digits(2) else { return nil }
                    var om = 0
                    if i < b.count && b[i] == 0x3A { i += 1 }
                    if i < b.count, let parsed = digits(2) { om = parsed }
                    guard oh <= 14, om < 60 else { return nil }  // real zones lie within ±14 h
                    offset = sign * (oh * 3600 + om * 60)
                } else if let zone = namedZone(UnsafeBufferPointer(rebasing: b[i...])) {
                    offset = zone
                    i = b.count
                }
            }
        }
        while i < b.count && b[i] == 0x20 { i += 1 }
        guard i == b.count else { return nil }
        return make(year, month, day, hour, minute, second, fraction, offset)
    }

    // MARK: RFC 822 and everything else

    /// The form nearly every RSS date has, exactly: `[Ddd, ]D[D] Mmm YYYY HH:MM[:SS] ZONE` with one space between
    /// parts and ZONE `+hhmm`, `-hhmm`, `GMT`, `UT`, `UTC` or `Z`; `nil` for anything else, which ``loose(_:)``
    /// then reads (to the same instant, when both do). Allocates nothing: ``loose(_:)`` costs ~10× as much.
    static func rfc822(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        if let date = canonicalRFC822(b) { return date }
        return rfc822Fields(b)
    }

    /// The commonest RSS date of all, `Ddd, DD Mmm YYYY HH:MM:SS +hhmm` (31 bytes) or `… GMT` (29), read at fixed
    /// places; `nil` for any other shape (and for values out of range), which ``rfc822Fields(_:)`` then reads. What
    /// this returns, that reads to the same instant (`DateFastPathTests` checks both on generated dates): ~380
    /// instructions with the calendar arithmetic, against ~510 (issue 18).
    static func canonicalRFC822(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        let n = b.count
        guard n == 31 || n == 29, b[3] == 0x2C, b[4] == 0x20, b[7] == 0x20, b[11] == 0x20, b[16] == 0x20, b[19] == 0x3A,
              b[22] == 0x3A, b[25] == 0x20 else { return nil }
        @inline(__always) func twoDigits(_ k: Int) -> Int? {
            let tens = b[k] &- 0x30, ones = b[k + 1] &- 0x30
            return tens < 10 && ones < 10 ? Int(tens) * 10 + Int(ones) : nil
        }
        guard isLetter(b[0]), isWeekday(UnsafeBufferPointer(rebasing: b[0..<3])), let day = twoDigits(5),
              let month = monthNumber(UnsafeBufferPointer(rebasing: b[8..<11])), let century = twoDigits(12),
              let year = twoDigits(14), let hour = twoDigits(17), let minute = twoDigits(20), let second = twoDigits(23)
        else { return nil }
        let offset: Int
        if n == 31 {
            guard b[26] == 0x2B || b[26] == 0x2D, let hours = twoDigits(27), let minutes = twoDigits(29), hours <= 14, minutes < 60
            else { return nil }
            offset = (b[26] == 0x2D ? -1 : 1) * (hours * 3600 + minutes * 60)
        } else {
            guard b[26] == 0x47, b[27] == 0x4D, b[28] == 0x54 else { return nil }  // GMT
            offset = 0
        }
        return make(century * 100 + year, month, day, hour, minute, second, 0, offset)
    }

    /// ``rfc822(_:)`` field by field, for every shape it takes.
    static func rfc822Fields(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        let n = b.count
        var i = 0
        func number(_ maximumDigits: Int, exactly: Bool) -> Int? {
            var value = 0, count = 0
            while i < n, count < maximumDigits, isDigit(b[i]) { value = value * 10 + Int(b[i] - 0x30); i += 1; count += 1 }
            return count == 0 || (exactly && count != maximumDigits) ? nil : value
        }
        func skip(_ byte: UInt8) -> Bool {
            guard i < n, b[i] == byte else { return false }
            i += 1
            return true
        }
        if n > 5, isLetter(b[0]), b[3] == 0x2C {  // "Ddd,"
            guard isWeekday(UnsafeBufferPointer(rebasing: b[0..<3])) else { return nil }
            i = 4
            guard skip(0x20) else { return nil }
        }
        guard let day = number(2, exactly: false), skip(0x20), i + 3 < n,
              let month = monthNumber(UnsafeBufferPointer(rebasing: b[i..<(i + 3)])) else { return nil }
        i += 3
        guard skip(0x20), let year = number(4, exactly: true), skip(0x20),
              let hour = number(2, exactly: true), skip(0x3A), let minute = number(2, exactly: true) else { return nil }
        var second = 0
        if skip(0x3A) {
            guard let value = number(2, exactly: true) else { return nil }
            second = value
        }
        guard skip(0x20) else { return nil }
        let zone = UnsafeBufferPointer(rebasing: b[i..<n])
        let offset: Int
        if zone.count == 5, zone[0] == 0x2B || zone[0] == 0x2D {
            i += 1
            guard let value = number(4, exactly: true) else { return nil }
            let hours = value / 100, minutes = value % 100
            guard hours <= 14, minutes < 60 else { return nil }
            offset = (zone[0] == 0x2D ? -1 : 1) * (hours * 3600 + minutes * 60)
        } else if matchesExactly(zone, "GMT") || matchesExactly(zone, "UT") || matchesExactly(zone, "UTC") || matchesExactly(zone, "Z") {
            offset = 0
        } else {
            return nil
        }
        return make(year, month, day, hour, minute, second, 0, offset)
    }

    private static func matchesExactly(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        bytes.count == literal.utf8CodeUnitCount && memcmp(bytes.baseAddress!, literal.utf8Start, bytes.count) == 0
    }

    /// Reads tokens in any order: weekday and month names, numbers, `hh:mm[:ss]`, zones, AM/PM.
    static func loose(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        var year: Int?
        var yearDigits = 0
        var month: Int?
        var numbers: [(value: Int, digits: Int)] = []
        var hour = 0, minute = 0, second = 0
        var fraction = 0.0
        var haveTime = false
        var offset: Int?
        var pm: Bool?
        var i = 0
        while i < b.count {
            let c = b[i]
            if isDigit(c) {
                var value = 0
                var count = 0
                let start = i
                while i < b.count && isDigit(b[i]) { value = value &* 10 &+ Int(b[i] - 0x30); i += 1; count += 1 }
                if i < b.count && b[i] == 0x3A && !haveTime && count <= 2 {  // a time
                    haveTime = true
                    hour = value
                    i += 1
                    var parts: [Int] = []
                    while parts.count < 2 {
                        var part = 0, partDigits = 0
                        while i < b.count && isDigit(b[i]) && partDigits < 2 { part = part * 10 + Int(b[i] - 0x30); i += 1; partDigits += 1 }
                        guard partDigits > 0 else { return nil }
                        parts.append(part)
                        if i < b.count && b[i] == 0x3A { i += 1 } else { break }
                    }
                    minute = parts[0]
                    if parts.count > 1 { second = parts[1] }
                    if i < b.count && (b[i] == 0x2E || b[i] == 0x2C) && i + 1 < b.count && isDigit(b[i + 1]) {
                        i += 1
                        var scale = 0.1
                        while i < b.count && isDigit(b[i]) { fraction += Double(b[i] - 0x30) * scale; scale /= 10; i += 1 }
                    }
                    continue
                }
                // A signed number right after the time is a zone (handled below); here only plain numbers.
                if start > 0 && (b[start - 1] == 0x2B || (b[start - 1] == 0x2D && haveTime)) && haveTime {
                    let sign = b[start - 1] == 0x2D ? -1 : 1
                    var hours = value, minutes = 0
                    if count == 4 { hours = value / 100; minutes = value % 100 }
                    else if count <= 2, i < b.count, b[i] == 0x3A, i + 2 < b.count + 0, isDigit(b[i + 1]) {
                        i += 1
                        var m = 0, d = 0
                        while i < b.count && isDigit(b[i]) && d < 2 { m = m * 10 + Int(b[i] - 0x30); i += 1; d += 1 }
                        minutes = m
                    } else if count != 2 && count != 1 { return nil }
                    guard hours <= 14, minutes < 60 else { return nil }
                    offset = sign * (hours * 3600 + minutes * 60)
                    continue
                }
                if count == 4 && year == nil { year = value; yearDigits = 4 } else { numbers.append((value, count)) }
                continue
            }
            if isLetter(c) {
                let start = i
                while i < b.count && isLetter(b[i]) { i += 1 }
                let word = UnsafeBufferPointer(rebasing: b[start..<i])
                if let m = monthNumber(word) {
                    if month == nil { month = m }
                } else if isWeekday(word) {
                    continue
                } else if word.count == 2 && (lower(word[0]) == 0x61 || lower(word[0]) == 0x70) && lower(word[1]) == 0x6D {
                    pm = lower(word[0]) == 0x70
                } else if let zone = namedZone(word) {
                    if offset == nil { offset = zone }
                } else if word.count == 1 && lower(word[0]) == 0x74 {
                    continue  // a stray ISO 'T'
                }
                // Other words ("at", "of", a zone name in parentheses) carry no date: skip them.
                continue
            }
            i += 1
        }
        guard let month else { return nil }
        // The day is the first short number; a year not written with four digits is the next one.
        var day: Int?
        for number in numbers {
            if day == nil && number.digits <= 2 && number.value >= 1 && number.value <= 31 { day = number.value; continue }
            if year == nil && number.digits <= 2 { year = number.value; yearDigits = number.digits }
        }
        guard var year, let day else { return nil }
        if yearDigits <= 2 { year += year < 50 ? 2000 : 1900 }
        if let pm {
            if pm && hour < 12 { hour += 12 }
            if !pm && hour == 12 { hour = 0 }
        }
        return make(year, month, day, hour, minute, second, fraction, offset ?? 0)
    }

    // MARK: Pieces

    private static func make(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int,
                             _ fraction: Double, _ offset: Int) -> Date? {
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              (0...24).contains(hour), (0...59).contains(minute), (0...60).contains(second),
              hour < 24 || (minute == 0 && second == 0) else { return nil }
        let days = daysFromCivil(Int64(year), Int64(month), Int64(day))
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + min(second, 59)) - Int64(offset)
        // RFC 3339 has four-digit years: an instant outside 0001–9999 in UTC is not a date we can write.
        guard seconds >= earliest && seconds <= latest else { return nil }
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static let earliest = daysFromCivil(1, 1, 1) * 86_400
    private static let latest = daysFromCivil(9999, 12, 31) * 86_400 + 86_399

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(_ y: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let year = m <= 2 ? y - 1 : y
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of ``daysFromCivil(_:_:_:)`` (Howard Hinnant's `civil_from_days`).
    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }
    private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
    private static func isLetter(_ c: UInt8) -> Bool { (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A }
    private static func lower(_ c: UInt8) -> UInt8 { c | 0x20 }

    private static func matches(_ word: UnsafeBufferPointer<UInt8>, _ literal: StaticString, minimum: Int) -> Bool {
        guard word.count >= minimum, word.count <= literal.utf8CodeUnitCount else { return false }
        for k in 0..<word.count where lower(word[k]) != literal.utf8Start[k] { return false }
        return true
    }

    private static let months: [StaticString] = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
    ]

    /// Three letters, lowercased, as one number (`| 0x20` lowercases letters and maps no other byte to one).
    @inline(__always) private static func threeLetterKey(_ word: UnsafeBufferPointer<UInt8>) -> UInt32 {
        UInt32(word[0] | 0x20) << 16 | UInt32(word[1] | 0x20) << 8 | UInt32(word[2] | 0x20)
    }

    private static func monthNumber(_ word: UnsafeBufferPointer<UInt8>) -> Int? {
        // The abbreviations RFC 822 dates use, in one switch: the loop below matched them at ~200 instructions a date.
        if word.count == 3 {
            switch threeLetterKey(word) {
            case 0x6A_616E: return 1   // jan
            case 0x66_6562: return 2   // feb
            case 0x6D_6172: return 3   // mar
            case 0x61_7072: return 4   // apr
            case 0x6D_6179: return 5   // may
            case 0x6A_756E: return 6   // jun
            case 0x6A_756C: return 7   // jul
            case 0x61_7567: return 8   // aug
            case 0x73_6570: return 9   // sep
            case 0x6F_6374: return 10  // oct
            case 0x6E_6F76: return 11  // nov
            case 0x64_6563: return 12  // dec
            default: return nil
            }
        }
        for (index, name) in months.enumerated() where matches(word, name, minimum: 3) { return index + 1 }
        if matches(word, "sept", minimum: 4) { return 9 }
        return nil
    }

    private static let weekdays: [StaticString] = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    private static func isWeekday(_ word: UnsafeBufferPointer<UInt8>) -> Bool {
        if word.count == 3 {
            switch threeLetterKey(word) {
            case 0x6D_6F6E, 0x74_7565, 0x77_6564, 0x74_6875, 0x66_7269, 0x73_6174, 0x73_756E: return true  // mon … sun
            default: return false
            }
        }
        if weekdays.contains(where: { matches(word, $0, minimum: 3) }) { return true }
        return matches(word, "tues", minimum: 4) || matches(word, "thurs", minimum: 5)
    }

    /// Offsets of named zones, in seconds east of UTC.
    private static func namedZone(_ word: UnsafeBufferPointer<UInt8>) -> Int? {
        var name: [UInt8] = []
        for c in word where isLetter(c) { name.append(c & ~0x20) }
        guard !name.isEmpty, name.count == word.count || word.count <= 5 else { return nil }
        switch String(decoding: name, as: UTF8.self) {
        case "GMT", "UT", "UTC", "Z", "Z ", "WET": return 0
        case "EST": return -5 * 3600
        case "EDT": return -4 * 3600
        case "CST": return -6 * 3600
        case "CDT": return -5 * 3600
        case "MST": return -7 * 3600
        case "MDT": return -6 * 3600
        case "PST": return -8 * 3600
        case "PDT": return -7 * 3600
        case "AKST": return -9 * 3600
        case "AKDT": return -8 * 3600
        case "HST": return -10 * 3600
        case "BST", "CET", "WEST": return 3600
        case "CEST", "EET": return 2 * 3600
        case "EEST", "MSK": return 3 * 3600
        case "IST": return 5 * 3600 + 1800
        case "JST", "KST": return 9 * 3600
        case "AEST": return 10 * 3600
        case "AEDT": return 11 * 3600
        case "NZST": return 12 * 3600
        case "NZDT": return 13 * 3600
        default:
            // Military letters (RFC 822 section 5): A–I are +1…+9, K–M +10…+12, N–Y −1…−12, Z is UTC.
            guard name.count == 1 else { return nil }
            let letter = Int(name[0])
            switch letter {
            case 0x41...0x49: return (letter - 0x40) * 3600
            case 0x4B...0x4D: return (letter - 0x4B + 10) * 3600
            case 0x4E...0x59: return -(letter - 0x4D) * 3600
            default: return nil
            }
        }
    }
}
