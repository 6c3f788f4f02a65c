import Foundation
import Syndication

// Support for GofeedConformanceTests: running our parser over one corpus file, reading gofeed's expected
// JSON, and recording field comparisons with the normalisations documented below.

/// One field compared between gofeed's expected JSON and our result.
struct GofeedComparison: Sendable {
    /// The corpus file, relative to `testdata/` (`translator/rss/….xml`).
    let file: String
    /// The field path in gofeed's JSON (`items[0].title`), or a synthesised one (`items.count`).
    let field: String
    let expected: String
    let actual: String
    let matched: Bool
    /// Set when the comparison belongs to a case or field excluded as gofeed-only policy; not counted.
    var policyExclusion: String?
    /// Item and entry counts are checked and printed but are not fields of gofeed's JSON, so they are kept
    /// out of the match rate (they would add hundreds of trivial matches).
    var isCountCheck: Bool { field == "items.count" || field == "entries.count" }
    /// Format and version fields: in every case, so the report also gives the rate without them.
    var isFormatField: Bool { ["version", "feedType", "feedVersion"].contains(field) }
}

/// What our parser produced for one file.
struct GofeedParsed {
    let articles: [Article]
    let summary: FeedSummary

    /// Parses `path` with `FeedParser` (source = the path, no base URL) and collects every article.
    init(path: String) {
        var articles: [Article] = []
        summary = FeedParser.parse(contentsOfFile: path, source: path) { article, _ in articles.append(article) }
        self.articles = articles
    }
}

/// A leaf of gofeed's expected JSON: a scalar, or an empty array or object.
struct GofeedLeaf {
    /// `items[0].authors[1].name`.
    let path: String
    /// The same with indices removed: `items[].authors[].name`, the key of the exclusion table.
    let pattern: String
}

enum GofeedJSON {
    /// Every leaf of `value`, depth first.
    static func leaves(_ value: Any, path: String = "", pattern: String = "") -> [GofeedLeaf] {
        if let object = value as? [String: Any], !object.isEmpty {
            return object.keys.sorted().flatMap { key in
                leaves(object[key]!, path: join(path, key), pattern: join(pattern, key))
            }
        }
        if let array = value as? [Any], !array.isEmpty {
            return array.enumerated().flatMap { index, element in
                leaves(element, path: "\(path)[\(index)]", pattern: "\(pattern)[]")
            }
        }
        return [GofeedLeaf(path: path, pattern: pattern)]
    }

    static func join(_ prefix: String, _ key: String) -> String { prefix.isEmpty ? key : "\(prefix).\(key)" }

    /// A JSON scalar as text: strings as they are, numbers and booleans in their JSON spelling.
    static func scalar(_ value: Any?) -> String? {
        switch value {
        case nil: return nil
        case let string as String: return string
        case let number as NSNumber:
            // JSONSerialization gives booleans as NSNumber of ObjC type `c` (char).
            if String(cString: number.objCType) == "c" { return number.boolValue ? "true" : "false" }
            return number.stringValue
        default: return "\(value!)"
        }
    }
}

/// Records the comparisons of one case and which expected leaves they covered.
///
/// Normalisations (each one applies to both sides):
/// - Text is compared after trimming XML white space (space, tab, CR, LF) at both ends; gofeed trims too,
///   and leading/trailing white space carries no meaning in these fields. Nothing else is rewritten.
/// - A JSON `null` or absent value on our side is shown as `nil`; an empty string counts as absent, because
///   gofeed's JSON omits empty fields (`omitempty`) and our model stores `nil` for them.
/// - Dates are compared as instants, to the millisecond: gofeed's `…Parsed` fields are RFC 3339 strings,
///   ours are `Date`s. When we have no date, the raw text we kept (`publishedRaw`/`updatedRaw`) is shown.
/// - Versions are compared as decimal numbers when both sides are numbers (gofeed's RSS 0.90 is `0.9`,
///   ours `0.90`), else as strings.
final class GofeedChecker {
    let file: String
    let expected: [String: Any]
    let parsed: GofeedParsed
    private(set) var comparisons: [GofeedComparison] = []
    /// Leaf paths (or subtree prefixes) that a comparison, a declared duplicate or a selector covered.
    private(set) var covered: Set<String> = []

    init(file: String, expected: [String: Any], parsed: GofeedParsed) {
        self.file = file
        self.expected = expected
        self.parsed = parsed
    }

    var metadata: FeedMetadata { parsed.summary.metadata }

    /// Our article at `index`, if we produced that many.
    func article(_ index: Int) -> Article? { index < parsed.articles.count ? parsed.articles[index] : nil }

    // MARK: Recording

    func record(_ field: String, expected: String, actual: String, matched: Bool) {
        comparisons.append(GofeedComparison(file: file, field: field, expected: expected, actual: actual, matched: matched))
        covered.insert(field)
    }

    /// Marks a leaf (or a subtree) as covered without a comparison of its own: a duplicate of a field that
    /// is compared (gofeed's raw `updated` next to `updatedParsed`, `author` next to `authors[0]`), or an
    /// attribute used only to decide where a value goes (Atom `rel`).
    func cover(_ path: String) { covered.insert(path) }

    func isCovered(_ leaf: GofeedLeaf) -> Bool {
        if covered.contains(leaf.path) { return true }
        for prefix in covered where leaf.path.hasPrefix(prefix) {
            let rest = leaf.path.dropFirst(prefix.count)
            if rest.hasPrefix(".") || rest.hasPrefix("[") { return true }
        }
        return false
    }

    // MARK: Comparisons

    /// Compares the string at `object[key]` (when present) with `actual`, trimmed.
    func text(_ object: [String: Any], _ key: String, at prefix: String, _ actual: @autoclosure () -> String?, missing: Bool = false) {
        guard let value = object[key], let expected = GofeedJSON.scalar(value) else { return }
        compareText(GofeedJSON.join(prefix, key), expected: expected, actual: missing ? nil : actual(), missing: missing)
    }

    func compareText(_ field: String, expected: String, actual: String?, missing: Bool = false) {
        let want = Self.trim(expected)
        let got = actual.map(Self.trim).flatMap { $0.isEmpty ? nil : $0 }
        let matched = want.isEmpty ? got == nil : got == want
        record(field, expected: Self.show(want), actual: missing ? "<no such article>" : Self.show(got), matched: matched)
    }

    /// Compares a language as a BCP 47 tag: our parser writes tags in RFC 5646's recommended case with hyphens
    /// (`en-US`), gofeed keeps them as written (`en-us`, `en_US`). RFC 5646 section 2.1.1: "The case distinctions do
    /// not carry meaning", so case is folded and `_` read as `-` on both sides; anything else must be equal.
    func language(_ object: [String: Any], _ key: String, at prefix: String, _ actual: String?) {
        guard let value = object[key], let expected = GofeedJSON.scalar(value) else { return }
        func tag(_ text: String) -> String { Self.trim(text).lowercased().replacingOccurrences(of: "_", with: "-") }
        let got = actual.map(Self.trim)
        record(GofeedJSON.join(prefix, key), expected: Self.show(Self.trim(expected)), actual: Self.show(got),
               matched: got.map(tag) == tag(expected))
    }

    /// Compares an RFC 3339 instant at `object[key]` with our date; covers the raw twin (`key` without `Parsed`).
    func date(_ object: [String: Any], _ key: String, at prefix: String, _ actual: Date?, raw: String?, missing: Bool = false) {
        guard let text = object[key] as? String else { return }
        let field = GofeedJSON.join(prefix, key)
        if key.hasSuffix("Parsed") { cover(GofeedJSON.join(prefix, String(key.dropLast("Parsed".count)))) }
        guard let want = Self.rfc3339(text) else {
            record(field, expected: "unreadable expected date \(text)", actual: "-", matched: false)
            return
        }
        let matched = actual.map { abs($0.timeIntervalSince(want)) < 0.001 } ?? false
        let shown = missing ? "<no such article>" : actual.map(FeedDate.rfc3339) ?? raw.map { "nil (raw kept: \(Self.show($0)))" } ?? "nil"
        record(field, expected: FeedDate.rfc3339(want), actual: shown, matched: matched)
    }

    /// Compares a format version, numerically when both sides are numbers.
    func version(_ field: String, expected: String, actual: String?) {
        let matched: Bool
        if let want = Double(expected), let got = actual.flatMap(Double.init) { matched = want == got } else { matched = expected == actual }
        record(field, expected: Self.show(expected), actual: Self.show(actual), matched: matched)
    }

    /// Compares a list entry by membership: gofeed's `categories[i]` matches when our list contains it.
    /// Order is not compared (our parser merges categories from several elements and drops duplicates).
    func member(_ field: String, expected: String, in actual: [String], missing: Bool = false) {
        let want = Self.trim(expected)
        let matched = actual.contains { Self.trim($0) == want }
        record(field, expected: Self.show(want), actual: missing ? "<no such article>" : "[" + actual.map(Self.show).joined(separator: ", ") + "]",
               matched: matched)
    }

    // MARK: Helpers

    static func trim(_ text: String) -> String {
        text.trimmingCharacters(in: CharacterSet(charactersIn: " \t\r\n"))
    }

    /// A value for the report: quoted, with control characters escaped, cut at 300 characters.
    static func show(_ text: String?) -> String {
        guard let text else { return "nil" }
        let quoted = text.debugDescription
        guard quoted.count > 300 else { return quoted }
        return String(quoted.prefix(300)) + "…(+\(quoted.count - 300) chars)"
    }

    static func rfc3339(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        if let date = plain.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }
}
