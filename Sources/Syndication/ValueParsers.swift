// Parsers for the values feeds write as text: RSS persons, durations, lengths, explicit flags, the first
// image in HTML. Pure functions of their input, with no parser state.

import Foundation

/// Parsers for field values as feeds write them. Each returns `nil` (or keeps the text) rather than trap on
/// hostile input.
enum ValueParsers {
    /// `email (Name)`, `Name (email)`, `Name <email>`, a bare address or a bare name, as RSS `author` fields
    /// are written. Whichever part holds an `@` is the address; text in angle brackets is an address only
    /// if it looks like one, so `<p>Name</p>` stays a name.
    static func rssPerson(_ text: String) -> Person {
        // Most are a plain name: no parenthesis, angle bracket or @ (a byte scan, no Character work).
        let isPlain = text.utf8.withContiguousStorageIfAvailable { bytes in
            !bytes.contains { $0 == 0x28 || $0 == 0x3C || $0 == 0x40 }
        } ?? !text.utf8.contains { $0 == 0x28 || $0 == 0x3C || $0 == 0x40 }
        if isPlain { return Person(name: text) }
        func isAddress(_ part: String) -> Bool {
            part.utf8.contains(0x40) && !part.utf8.contains(0x20) && !part.utf8.contains(0x3C)  // @, no space, no <
        }
        if let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")"), open < close {
            let inside = String(text[text.index(after: open)..<close]).trimmingXMLWhitespace()
            let outside = (String(text[..<open]) + String(text[text.index(after: close)...])).trimmingXMLWhitespace()
            if isAddress(inside) && !isAddress(address(outside)) {
                return Person(name: outside.isEmpty ? nil : outside, email: address(inside))
            }
            return Person(name: inside.isEmpty ? nil : inside, email: outside.isEmpty ? nil : address(outside))
        }
        if let open = text.firstIndex(of: "<"), let close = text.lastIndex(of: ">"), open < close {
            let inside = String(text[text.index(after: open)..<close]).trimmingXMLWhitespace()
            if isAddress(inside) {
                let name = (String(text[..<open]) + String(text[text.index(after: close)...])).trimmingXMLWhitespace()
                return Person(name: name.isEmpty ? nil : name, email: inside)
            }
        }
        if isAddress(text) { return Person(email: text) }
        return Person(name: text)
    }

    /// An address as RSS writes it around the `@`: without a `mailto:` in front or angle brackets around it
    /// (`<jo@example.org> (Jo)`, `mailto:jo@example.org (Jo)`).
    private static func address(_ text: String) -> String {
        var address = Substring(text)
        if address.hasPrefix("<") && address.hasSuffix(">") && address.count > 2 {
            address = address.dropFirst().dropLast().trimmingXMLWhitespaceSubstring()
        }
        if address.count > 7, address.prefix(7).lowercased() == "mailto:" { address = address.dropFirst(7) }
        return address.utf8.count == text.utf8.count ? text : String(address)
    }

    /// Fills in the email of each of `people` that has none from a person of `others` with the same name (ignoring
    /// case): an item's `dc:creator` (a name) with its RSS `author` (`email (Name)`) for the same person.
    static func completeEmails(_ people: inout [Person], from others: [Person]) {
        for index in people.indices where people[index].email == nil {
            guard let name = people[index].name?.lowercased(),
                  let match = others.first(where: { $0.email != nil && $0.name?.lowercased() == name }) else { continue }
            people[index].email = match.email
        }
    }

    /// `rssPerson`, or `nil` when the text names nobody (`()`, `<>`).
    static func rssPersonIfAny(_ text: String) -> Person? {
        let person = rssPerson(text)
        return person == Person() ? nil : person
    }

    /// Whether a value (an RSS `guid`) is an absolute http(s) URL, and so can stand in for a missing link.
    static func looksLikeURL(_ value: String) -> Bool {
        value.hasPrefix("http://") || value.hasPrefix("https://")
    }

    /// `HH:MM:SS`, `MM:SS` or plain seconds.
    static func duration(_ text: String) -> Int? {
        // Non-negative and bounded: nothing here may trap on hostile numbers (NaN, 1e300, huge hours).
        let trimmed = text.trimmingXMLWhitespace()
        guard trimmed.utf8.contains(0x3A) else {  // plain seconds, perhaps with a fraction
            if let seconds = Int(trimmed) { return seconds >= 0 ? seconds : nil }
            guard let seconds = Double(trimmed), seconds.isFinite, seconds >= 0, seconds < 1e15 else { return nil }
            return Int(seconds)
        }
        let parts = trimmed.split(separator: ":", omittingEmptySubsequences: false).map { Int($0.trimmingXMLWhitespaceSubstring()) }
        guard parts.count <= 3, parts.allSatisfy({ ($0 ?? -1) >= 0 }) else { return nil }
        var total = 0
        for part in parts {
            let (scaled, overflowed) = total.multipliedReportingOverflow(by: 60)
            let (sum, overflowedAgain) = scaled.addingReportingOverflow(part!)
            if overflowed || overflowedAgain { return nil }
            total = sum
        }
        return total
    }

    /// A byte length as feeds write it; negative or unparseable lengths are no length.
    static func length(_ text: String) -> Int64? {
        guard let value = Int64(text.trimmingXMLWhitespace()), value >= 0 else { return nil }
        return value
    }

    /// A byte length read straight from UTF-8 bytes: decimal digits, with XML white space around them; `nil` for
    /// anything else (a sign, a fraction, an overflow), as ``length(_:)-(String)`` reads the same text.
    static func length(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var start = 0, end = bytes.count
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D }
        while start < end && isSpace(bytes[start]) { start += 1 }
        while end > start && isSpace(bytes[end - 1]) { end -= 1 }
        if start < end && bytes[start] == 0x2B { start += 1 }  // Int64("+5") is 5 too
        guard start < end else { return nil }
        var value: Int64 = 0
        for index in start..<end {
            let digit = bytes[index] &- 0x30
            guard digit < 10 else { return nil }
            let (scaled, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowAgain) = scaled.addingReportingOverflow(Int64(digit))
            guard !overflow && !overflowAgain else { return nil }
            value = sum
        }
        return value
    }

    /// iTunes `explicit`: yes/true/explicit or no/false/clean; anything else says nothing.
    static func explicit(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "yes", "true", "explicit": return true
        case "no", "false", "clean": return false
        default: return nil
        }
    }

    /// The `src` of the first `<img>` in HTML content: one `memchr` scan for `<`, no Foundation search.
    static func firstImage(in text: TextContent?) -> String? {
        guard let text, text.utf8.count > 4 else { return nil }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        return text.utf8.withUnsafeBufferPointer { bytes -> String? in
            guard let base = bytes.baseAddress else { return nil }
            let count = bytes.count
            var index = 0
            while index + 4 < count {
                guard let found = memchr(base + index, 0x3C, count - index) else { return nil }
                index = base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
                guard index + 3 < count, base[index] | 0x20 == 0x69, base[index + 1] | 0x20 == 0x6D, base[index + 2] | 0x20 == 0x67,
                      isSpace(base[index + 3]) || base[index + 3] == 0x2F else { continue }
                // Inside the tag, find src= and its quoted value.
                var cursor = index + 3
                while cursor + 5 < count && base[cursor] != 0x3E {
                    if base[cursor] | 0x20 == 0x73, base[cursor + 1] | 0x20 == 0x72, base[cursor + 2] | 0x20 == 0x63, base[cursor + 3] == 0x3D,
                       isSpace(base[cursor - 1]) {
                        let quote = base[cursor + 4]
                        guard quote == 0x22 || quote == 0x27 else { return nil }
                        let start = cursor + 5
                        var end = start
                        while end < count && base[end] != quote { end += 1 }
                        guard end < count, end > start else { return nil }
                        let value = UnsafeBufferPointer(start: base + start, count: end - start)
                        let url = String(decoding: value, as: UTF8.self)
                        return memchr(base + start, 0x26, end - start) != nil ? url.replacingOccurrences(of: "&amp;", with: "&") : url
                    }
                    cursor += 1
                }
                return nil
            }
            return nil
        }
    }

    /// A language as a BCP 47 tag (RFC 5646): `en_US` and `EN-us` are `en-US`, `zh-hant-tw` is `zh-Hant-TW`.
    ///
    /// Underscores become hyphens and each subtag gets the case RFC 5646 section 2.1.1 recommends: the language
    /// lowercase, a four-letter script title case, a two-letter region uppercase, the rest lowercase. A value that is
    /// not shaped like a language tag (`English`, `de, en`) is kept as written, trimmed; nothing is invented.
    /// `nil` for an empty value.
    static func languageTag(_ text: String) -> String? {
        let trimmed = text.trimmingXMLWhitespace()
        guard !trimmed.isEmpty else { return nil }
        let subtags = trimmed.utf8.split(omittingEmptySubsequences: false) { $0 == 0x2D || $0 == 0x5F }  // - _
        // The primary subtag: 2–3 letters (ISO 639), or i / x for grandfathered and private-use tags.
        guard let primary = subtags.first, (2...3).contains(primary.count) || (primary.count == 1 && [0x69, 0x78, 0x49, 0x58].contains(primary.first!)),
              primary.allSatisfy({ lowercaseASCII($0) &- 0x61 < 26 }),
              subtags.dropFirst().allSatisfy({ (1...8).contains($0.count) && $0.allSatisfy { lowercaseASCII($0) &- 0x61 < 26 || $0 &- 0x30 < 10 } })
        else { return trimmed }
        var result: [UInt8] = []
        result.reserveCapacity(trimmed.utf8.count)
        var afterSingleton = primary.count == 1
        for (index, subtag) in subtags.enumerated() {
            if index > 0 { result.append(0x2D) }
            let isAlpha = subtag.allSatisfy { lowercaseASCII($0) &- 0x61 < 26 }
            let upper = !afterSingleton && index > 0 && (subtag.count == 2 && isAlpha)
            let title = !afterSingleton && index > 0 && subtag.count == 4 && isAlpha
            for (offset, byte) in subtag.enumerated() {
                let lower = lowercaseASCII(byte)
                result.append(upper || (title && offset == 0) ? (lower &- 0x61 < 26 ? lower - 0x20 : lower) : lower)
            }
            if index > 0 && subtag.count == 1 { afterSingleton = true }  // an extension or private use: lowercase from here
        }
        let tag = String(decoding: result, as: UTF8.self)
        return tag == trimmed ? trimmed : tag
    }

    /// The text trimmed of XML whitespace, or `nil` when nothing is left.
    static func nonEmpty(_ text: String?) -> String? {
        guard let text = text?.trimmingXMLWhitespace(), !text.isEmpty else { return nil }
        return text
    }
}
