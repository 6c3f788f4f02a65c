import CByteScan
import Support

/// What a parser repaired to get through a malformed document, counted by kind.
///
/// Only parsers with ``ExpatXMLConfiguration/repairsMalformedInput`` on repair anything.
public struct XMLRepairs: Sendable, Hashable {
    /// White space removed before the XML declaration (occurrences; at most 1).
    public var leadingWhitespace = 0
    /// `&` that started no reference, escaped as `&amp;`.
    public var bareAmpersands = 0
    /// HTML named references XML does not define (`&nbsp;`, `&eacute;`, …), replaced by character references.
    public var htmlEntities = 0
    /// Characters XML forbids (C0 controls, U+FFFE, U+FFFF), raw or as references, removed.
    public var invalidCharacters = 0
    /// Numeric references to 0x80–0x9F, which feeds mean as windows-1252 (`&#150;` is an en dash), mapped.
    public var windows1252References = 0
    /// Bytes that are not valid UTF-8 in a UTF-8 document, each replaced by U+FFFD.
    public var invalidUTF8 = 0
    /// Distinct namespace prefixes used without a declaration, and bound all the same.
    ///
    /// Well-known ones to their usual URIs, any other to one of its own (`urn:x-feedingest:undeclared-prefix:` and the
    /// prefix).
    public var undeclaredPrefixes = 0

    /// Creates an empty record.
    public init() {}

    /// The repairs a reference can need (a key path per call cost the filter a runtime look-up each time).
    enum ReferenceRepair { case bareAmpersand, htmlEntity, invalidCharacter, windows1252Reference }

    mutating func record(_ repair: ReferenceRepair) {
        switch repair {
        case .bareAmpersand: bareAmpersands += 1
        case .htmlEntity: htmlEntities += 1
        case .invalidCharacter: invalidCharacters += 1
        case .windows1252Reference: windows1252References += 1
        }
    }

    /// Whether nothing was repaired.
    public var isEmpty: Bool { self == XMLRepairs() }

    /// The kinds that occurred, with counts, in a stable order: `["bareAmpersands": 2, ...]`.
    public var counts: [(kind: String, count: Int)] {
        [("leadingWhitespace", leadingWhitespace), ("bareAmpersands", bareAmpersands), ("htmlEntities", htmlEntities),
         ("invalidCharacters", invalidCharacters), ("windows1252References", windows1252References),
         ("invalidUTF8", invalidUTF8), ("undeclaredPrefixes", undeclaredPrefixes)].filter { $0.1 > 0 }
    }
}

/// A streaming byte filter in front of expat that mends what real feeds get wrong, and leaves expat strict.
///
/// It lexes just enough XML to know where it is (text, tag, attribute value, CDATA, comment, processing
/// instruction, DOCTYPE) and, outside CDATA, comments and the DOCTYPE, escapes bare `&`, turns HTML named
/// references into numeric ones, drops characters XML forbids and, for UTF-8 input, replaces invalid
/// bytes with U+FFFD. Unchanged runs go to the sink as views of the input, so a clean document is not
/// copied. Anything cut by a chunk boundary is carried to the next chunk: the output never depends on the split.
///
/// Its state is `@exclusivity(unchecked)` (confined to one parser's thread, never accessed re-entrantly): the
/// dynamic checks on class properties were ~1.5% of full article extraction.
final class InputRepairFilter {
    private enum Mode: Equatable {
        case text, tag, cdata, comment, processingInstruction, doctype
        case attribute(quote: UInt8)
    }

    @exclusivity(unchecked) private var mode = Mode.text
    @exclusivity(unchecked) private var doctypeBrackets = 0
    @exclusivity(unchecked) private var doctypeQuote: UInt8 = 0
    @exclusivity(unchecked) private var doctypeInComment = false
    /// The last three bytes seen in the DOCTYPE, to recognise `<!--` and `-->` inside it.
    @exclusivity(unchecked) private var doctypeTail: UInt32 = 0
    /// The DOCTYPE's text (up to 64 KiB), to learn which entities its internal subset declares.
    @exclusivity(unchecked) private var doctypeText: [UInt8] = []
    /// General entities the internal subset declares: their references are expat's, even with HTML names.
    @exclusivity(unchecked) private var declaredEntities: Set<String> = []
    @exclusivity(unchecked) private var hasDoctype = false
    @exclusivity(unchecked) private var carry: [UInt8] = []
    /// The search for the root start tag's end in `carry`, which then starts with its `<`.
    @exclusivity(unchecked) private var rootTagSearch = RootTagSearch()
    /// Whether bytes above 0x7F are checked as UTF-8; set again when the parser decides a document's encoding from its
    /// bytes (before any byte above 0x7F reaches the filter).
    @exclusivity(unchecked) var validatesUTF8: Bool
    @exclusivity(unchecked) private(set) var repairs = XMLRepairs()

    /// The longest reference it looks at; a longer `&…` is a bare ampersand.
    private static let maximumReferenceLength = 40

    private let declaresWellKnownPrefixes: Bool

    /// Whether ``skipUnchanged(_:from:count:)`` runs; off only in tests, which check that it changes nothing.
    @exclusivity(unchecked) var takesFastPath = true

    /// - Parameter declaresWellKnownPrefixes: add declarations for well-known prefixes the root leaves
    ///   undeclared; only meaningful when expat processes namespaces.
    init(validatesUTF8: Bool, declaresWellKnownPrefixes: Bool) {
        self.validatesUTF8 = validatesUTF8
        self.declaresWellKnownPrefixes = declaresWellKnownPrefixes
    }

    /// Filters `input` and hands the result to `sink` in one or more pieces.
    func process(
        _ input: UnsafeRawBufferPointer, isFinal: Bool,
        into sink: (UnsafeRawBufferPointer) throws(ExpatXMLError) -> Void
    ) throws(ExpatXMLError) {
        if carry.isEmpty {
            try scan(input.bindMemory(to: UInt8.self), isFinal: isFinal, into: sink)
            return
        }
        var joined = carry
        joined.append(contentsOf: input)
        carry.removeAll(keepingCapacity: true)
        var failure: ExpatXMLError?
        joined.withUnsafeBufferPointer { buffer in
            do throws(ExpatXMLError) { try scan(buffer, isFinal: isFinal, into: sink) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    // swiftlint:disable:next cyclomatic_complexity function_body_length
    private func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, isFinal: Bool,
        into sink: (UnsafeRawBufferPointer) throws(ExpatXMLError) -> Void
    ) throws(ExpatXMLError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let count = bytes.count
        // Counts what goes out, so the position of an injected declaration is known.
        func emit(_ piece: UnsafeRawBufferPointer) throws(ExpatXMLError) {
            emittedBytes += Int64(piece.count)
            if !rootSeen, let start = piece.baseAddress {
                newlinesBeforeRoot += Self.newlines(in: start.assumingMemoryBound(to: UInt8.self), count: piece.count)
            }
            try sink(piece)
        }
        var index = 0
        var runStart = 0

        /// Sends the unchanged bytes before `end`, then `replacement`, and resumes after `skipping` bytes.
        func replace(at end: Int, skipping: Int, with replacement: [UInt8]) throws(ExpatXMLError) {
            if end > runStart { try emit(UnsafeRawBufferPointer(start: base + runStart, count: end - runStart)) }
            if !replacement.isEmpty {
                var failure: ExpatXMLError?
                replacement.withUnsafeBytes { buffer in
                    do throws(ExpatXMLError) { try emit(buffer) } catch { failure = error }
                }
                if let failure { throw failure }
            }
            runStart = end + skipping
        }

        /// Keeps the bytes from `position` for the next chunk.
        func keep(from position: Int) throws(ExpatXMLError) {
            if position > runStart { try emit(UnsafeRawBufferPointer(start: base + runStart, count: position - runStart)) }
            carry = Array(UnsafeBufferPointer(start: base + position, count: count - position))
            runStart = count
        }

        /// Handles the `&` at `index`; `false` when more bytes are needed (the rest is then kept for the next chunk).
        func handleReference() throws(ExpatXMLError) -> Bool {
            switch reference(at: index, in: base, count: count, isFinal: isFinal) {
            case .needMore:
                try keep(from: index)
                return false
            case .keep(let length):
                index += length
            case .replace(let length, let replacement, let kind):
                try replace(at: index, skipping: length, with: replacement)
                repairs.record(kind)  // counted once expat took what came before: chunk-independent
                index += length
            }
            return true
        }

        scanning: while index < count {
            // The fast path (see skipUnchanged): everything that goes out unchanged, in every mode but the DOCTYPE, with
            // the commonest changes of mode; it stops at the first byte that needs the byte-wise logic below.
            if takesFastPath && mode != .doctype {
                index = skipUnchanged(base, from: index, count: count)
                if index >= count { break }
            }
            let byte = base[index]
            // Bytes that need no thought in any mode: printable ASCII that ends nothing here.
            if byte >= 0x20 && byte < 0x80 {
                switch mode {
                case .text:
                    if byte == 0x26 {  // &
                        guard try handleReference() else { break scanning }
                        continue
                    }
                    if byte == 0x3C, rootSeen || !declaresWellKnownPrefixes, index + 1 < count,
                       case let next = base[index + 1], next == 0x2F || Self.isNameStart(next) {
                        mode = .tag  // a start or end tag, the commonest markup
                        index += 1
                        continue
                    }
                    if byte == 0x3C {  // <
                        if !rootSeen, declaresWellKnownPrefixes, index + 1 < count, Self.isNameStart(base[index + 1]) {
                            // The root start tag: declare well-known prefixes it leaves undeclared.
                            // Look for the tag's end within 64 KiB of its start, however the bytes were split:
                            // a longer root tag is left to expat, in one piece or in many.
                            let limit = Self.maximumRootTagBytes
                            // The kept bytes start with this `<`; what was searched of them before is not searched again.
                            if index != 0 { rootTagSearch = RootTagSearch() }
                            guard let tagEnd = Self.tagEnd(from: index, in: base, count: min(count, index + limit), resuming: &rootTagSearch) else {
                                if !isFinal && count - index < limit { try keep(from: index); break scanning }
                                rootSeen = true
                                rootTagSearch = RootTagSearch()
                                continue
                            }
                            rootSeen = true
                            var nameEnd = index + 1
                            while nameEnd < tagEnd, Self.isNameCharacter(base[nameEnd]) { nameEnd += 1 }
                            let tag = UnsafeBufferPointer(start: base + index, count: tagEnd - index)
                            let declarations = declarationsMissing(from: tag)
                            if !declarations.isEmpty {
                                newlinesBeforeRoot += Self.newlines(in: base + runStart, count: nameEnd - runStart)
                                try replace(at: nameEnd, skipping: 0, with: declarations)
                                injection = (emittedBytes - Int64(declarations.count), declarations.count, newlinesBeforeRoot + 1)
                            }
                            mode = .tag
                            index = nameEnd
                            continue
                        }
                        guard let opened = markup(at: index, in: base, count: count, isFinal: isFinal) else {
                            try keep(from: index); break scanning
                        }
                        // A `<` before the root that starts neither a name nor `!`/`?` markup (`<\0df:RDF`, whose NUL is
                        // removed below) may still be the root start tag once repaired. The filter has not recognised
                        // it, so it adds declarations to no later element either: declaring them on a child instead made
                        // the root's own declarations of those prefixes vanish, or not, depending on the split (fuzzing).
                        if opened.mode == .tag && opened.length == 1 { rootSeen = true }
                        mode = opened.mode
                        index += opened.length
                        continue
                    }
                case .tag:
                    if byte == 0x22 || byte == 0x27 { mode = .attribute(quote: byte) } else if byte == 0x3E { mode = .text }
                case .attribute(let quote):
                    if byte == quote { mode = .tag } else if byte == 0x26 {
                        guard try handleReference() else { break scanning }
                        continue
                    }
                case .cdata, .comment, .processingInstruction:
                    let literal: StaticString = mode == .cdata ? "]]>" : mode == .comment ? "-->" : "?>"
                    if byte == literal.utf8Start[0], let end = terminator(literal, at: index, in: base, count: count, isFinal: isFinal) {
                        if end < 0 { try keep(from: index); break scanning }
                        mode = .text
                        index += end
                        continue
                    }
                case .doctype:
                    let previous = doctypeTail
                    doctypeTail = (doctypeTail << 8 | UInt32(byte)) & 0xFF_FFFF
                    if doctypeText.count < 64 * 1024 { doctypeText.append(byte) }
                    if doctypeInComment {
                        if byte == 0x3E && previous & 0xFFFF == 0x2D2D { doctypeInComment = false }  // -->
                    } else if doctypeQuote != 0 {
                        if byte == doctypeQuote { doctypeQuote = 0 }
                    } else if byte == 0x2D && previous == 0x3C212D {  // <!-
                        doctypeInComment = true
                    } else if byte == 0x22 || byte == 0x27 {
                        doctypeQuote = byte
                    } else if byte == 0x5B {
                        doctypeBrackets += 1
                    } else if byte == 0x5D {
                        doctypeBrackets -= 1
                    } else if byte == 0x3E && doctypeBrackets <= 0 {
                        mode = .text
                        learnDeclaredEntities()
                    }
                }
                index += 1
                continue
            }
            if byte < 0x20 {
                if byte == 0x0A || byte == 0x09 || byte == 0x0D { index += 1; continue }
                try replace(at: index, skipping: 1, with: [])
                repairs.invalidCharacters += 1  // counted once expat took what came before: chunk-independent
                index += 1
                continue
            }
            // byte >= 0x80
            guard validatesUTF8 else { index += 1; continue }
            switch Self.utf8Sequence(at: index, in: base, count: count) {
            case .valid(let length):
                index += length
            case .incomplete where !isFinal:
                try keep(from: index)
                break scanning
            case .incomplete, .invalid:
                try replace(at: index, skipping: 1, with: [0xEF, 0xBF, 0xBD])
                repairs.invalidUTF8 += 1
                index += 1
            case .forbidden(let length):  // U+FFFE and U+FFFF are valid UTF-8 but not XML characters
                try replace(at: index, skipping: length, with: [])
                repairs.invalidCharacters += 1
                index += length
            }
        }
        if runStart < count {
            try emit(UnsafeRawBufferPointer(start: base + runStart, count: count - runStart))
        }
    }

    // MARK: The fast path

    /// Steps over the bytes from `start` that go out unchanged, and returns the index of the first byte that needs the
    /// byte-wise logic of ``scan(_:isFinal:into:)`` (or `count`). It changes mode where that logic would, on the
    /// commonest markup: a start or end tag (once the root is seen), a quoted attribute value and its end, a tag's end,
    /// and the end of a CDATA section, comment or processing instruction. It steps over the references XML predefines
    /// (`&lt;`, `&#233;`, …) and, for UTF-8, whole runs of valid characters. Wherever the byte-wise logic would decide
    /// otherwise, need more bytes, or change something, it stops, and that logic decides as it always did: the output
    /// is the same, for any split. Not for the DOCTYPE.
    ///
    /// The bytes between stops are found by ``feedingest_bytescan_find`` (CByteScan), 16 a step with SSE2.
    private func skipUnchanged(_ base: UnsafePointer<UInt8>, from start: Int, count: Int) -> Int {
        // Two copies, one for each constant: the wide scan's loop then tests no flag per block.
        validatesUTF8 ? skipUnchanged(base, from: start, count: count, high: 1) : skipUnchanged(base, from: start, count: count, high: 0)
    }

    @inline(__always)
    private func skipUnchanged(_ base: UnsafePointer<UInt8>, from start: Int, count: Int, high: Int32) -> Int {
        let tagsAreSimple = rootSeen || !declaresWellKnownPrefixes
        var index = start
        var mode = self.mode
        defer { self.mode = mode }
        while true {
            switch mode {
            case .text:
                index = feedingest_bytescan_find(base, index, count, 0x26, 0x3C, 0x3C, high)  // & <
                guard index < count else { return index }
                let byte = base[index]
                if byte == 0x3C {
                    // A start or end tag; anything else (`<!`, `<?`, the root before it is seen) is the byte-wise logic's.
                    guard tagsAreSimple, index + 1 < count, case let next = base[index + 1], next == 0x2F || Self.isNameStart(next)
                    else { return index }
                    mode = .tag
                    index += 1
                    continue
                }
                if byte == 0x26 {
                    let length = predefinedReferenceLength(at: index, in: base, count: count)
                    guard length > 0 else { return index }
                    index += length
                    continue
                }
            case .tag:
                index = feedingest_bytescan_find(base, index, count, 0x22, 0x27, 0x3E, high)  // " ' >
                guard index < count else { return index }
                let byte = base[index]
                if byte == 0x3E {
                    mode = .text
                    index += 1
                    continue
                }
                if byte == 0x22 || byte == 0x27 {
                    mode = .attribute(quote: byte)
                    index += 1
                    continue
                }
            case .attribute(let quote):
                index = feedingest_bytescan_find(base, index, count, quote, 0x26, quote, high)
                guard index < count else { return index }
                let byte = base[index]
                if byte == quote {
                    mode = .tag
                    index += 1
                    continue
                }
                if byte == 0x26 {
                    let length = predefinedReferenceLength(at: index, in: base, count: count)
                    guard length > 0 else { return index }
                    index += length
                    continue
                }
            case .cdata:
                index = feedingest_bytescan_find(base, index, count, 0x5D, 0x5D, 0x5D, high)  // ]
                guard index < count else { return index }
                if base[index] == 0x5D {
                    guard index + 2 < count else { return index }
                    if base[index + 1] == 0x5D && base[index + 2] == 0x3E {  // ]]>
                        mode = .text
                        index += 3
                    } else {
                        index += 1
                    }
                    continue
                }
            case .comment:
                index = feedingest_bytescan_find(base, index, count, 0x2D, 0x2D, 0x2D, high)  // -
                guard index < count else { return index }
                if base[index] == 0x2D {
                    guard index + 2 < count else { return index }
                    if base[index + 1] == 0x2D && base[index + 2] == 0x3E {  // -->
                        mode = .text
                        index += 3
                    } else {
                        index += 1
                    }
                    continue
                }
            case .processingInstruction:
                index = feedingest_bytescan_find(base, index, count, 0x3F, 0x3F, 0x3F, high)  // ?
                guard index < count else { return index }
                if base[index] == 0x3F {
                    guard index + 1 < count else { return index }
                    if base[index + 1] == 0x3E {  // ?>
                        mode = .text
                        index += 2
                    } else {
                        index += 1
                    }
                    continue
                }
            case .doctype:
                return index
            }
            // A stop that is not the mode's: a C0 control (the byte-wise logic's), or a byte above 0x7F in UTF-8.
            guard high != 0, base[index] >= 0x80 else { return index }
            repeat {
                let length = Self.validUTF8Length(at: index, in: base, count: count)
                guard length > 0 else { return index }
                index += length
            } while index < count && base[index] >= 0x80
        }
    }

    /// The length of the valid, complete UTF-8 sequence at `index`, whose lead byte is above 0x7F, when it encodes an
    /// XML character (not U+FFFE or U+FFFF); 0 otherwise. The cases ``utf8Sequence(at:in:count:)`` calls `.valid`.
    @inline(__always)
    static func validUTF8Length(at index: Int, in base: UnsafePointer<UInt8>, count: Int) -> Int {
        let lead = base[index]
        if lead < 0xE0 {
            guard lead >= 0xC2, index + 1 < count, base[index + 1] & 0xC0 == 0x80 else { return 0 }
            return 2
        }
        if lead < 0xF0 {
            guard index + 2 < count else { return 0 }
            let second = base[index + 1], third = base[index + 2]
            guard third & 0xC0 == 0x80 else { return 0 }
            switch lead {
            case 0xE0: guard second >= 0xA0 && second <= 0xBF else { return 0 }
            case 0xED: guard second >= 0x80 && second <= 0x9F else { return 0 }
            case 0xEF: guard second & 0xC0 == 0x80, second != 0xBF || third < 0xBE else { return 0 }  // U+FFFE, U+FFFF
            default: guard second & 0xC0 == 0x80 else { return 0 }
            }
            return 3
        }
        guard lead <= 0xF4, index + 3 < count else { return 0 }
        let second = base[index + 1]
        guard base[index + 2] & 0xC0 == 0x80, base[index + 3] & 0xC0 == 0x80 else { return 0 }
        switch lead {
        case 0xF0: guard second >= 0x90 && second <= 0xBF else { return 0 }
        case 0xF4: guard second >= 0x80 && second <= 0x8F else { return 0 }
        default: guard second & 0xC0 == 0x80 else { return 0 }
        }
        return 4
    }

    /// The length of the reference at `index` (an `&`) when ``reference(at:in:count:isFinal:)`` would keep it whatever
    /// follows and whatever the DOCTYPE declares: `&lt;` `&gt;` `&amp;` `&quot;` `&apos;`, and a character reference
    /// to an XML character outside 0x80–0x9F. 0 otherwise (the byte-wise logic decides).
    @inline(__always)
    private func predefinedReferenceLength(at index: Int, in base: UnsafePointer<UInt8>, count: Int) -> Int {
        guard index + 3 < count else { return 0 }
        let first = base[index + 1], second = base[index + 2], third = base[index + 3]
        if (first == 0x6C || first == 0x67) && second == 0x74 && third == 0x3B { return 4 }  // &lt; &gt;
        if first == 0x23 { return characterReferenceLength(at: index, in: base, count: count) }  // &#
        guard index + 4 < count else { return 0 }
        let fourth = base[index + 4]
        if first == 0x61 && second == 0x6D && third == 0x70 && fourth == 0x3B { return 5 }  // &amp;
        guard index + 5 < count, base[index + 5] == 0x3B else { return 0 }
        if first == 0x71 && second == 0x75 && third == 0x6F && fourth == 0x74 { return 6 }  // &quot;
        if first == 0x61 && second == 0x70 && third == 0x6F && fourth == 0x73 { return 6 }  // &apos;
        return 0
    }

    /// ``predefinedReferenceLength(at:in:count:)`` for `&#`: the same digits, limit and value as ``reference(at:in:count:isFinal:)``.
    private func characterReferenceLength(at index: Int, in base: UnsafePointer<UInt8>, count: Int) -> Int {
        var cursor = index + 2
        let limit = min(count, index + Self.maximumReferenceLength)
        var radix: UInt32 = 10
        if cursor < count && base[cursor] == 0x78 { radix = 16; cursor += 1 }
        var value: UInt32 = 0
        var digits = 0
        while cursor < limit, let digit = Self.digit(base[cursor], radix: radix) {
            value = value > 0x10FFFF ? value : value &* radix &+ digit
            digits += 1
            cursor += 1
        }
        guard cursor < limit, base[cursor] == 0x3B, digits > 0, !(0x80...0x9F).contains(value), Self.isXMLCharacter(value)
        else { return 0 }
        return cursor + 1 - index
    }

    // MARK: Markup

    /// What `<` at `index` opens, and how many bytes of the opener to step over; `nil` when more bytes are needed.
    private func markup(at index: Int, in base: UnsafePointer<UInt8>, count: Int, isFinal: Bool) -> (mode: Mode, length: Int)? {
        func starts(_ literal: StaticString) -> Bool? {
            let length = literal.utf8CodeUnitCount
            let available = min(length, count - index)
            for offset in 0..<available where base[index + offset] != literal.utf8Start[offset] { return false }
            if available < length { return isFinal ? false : nil }
            return true
        }
        guard index + 1 < count || isFinal else { return nil }
        let next = index + 1 < count ? base[index + 1] : 0
        if next == 0x21 {  // <!
            guard let isCDATA = starts("<![CDATA[") else { return nil }
            if isCDATA { return (.cdata, 9) }
            guard let isComment = starts("<!--") else { return nil }
            if isComment { return (.comment, 4) }
            guard let isDoctype = starts("<!DOCTYPE") else { return nil }
            if isDoctype {
                hasDoctype = true
                doctypeBrackets = 0
                doctypeQuote = 0
                doctypeInComment = false
                doctypeTail = 0
                doctypeText.removeAll()
                return (.doctype, 9)
            }
            return (.tag, 2)  // something else expat will judge
        }
        if next == 0x3F { return (.processingInstruction, 2) }
        return (.tag, 1)
    }

    /// The length up to and including `literal` if it starts at `index`; -1 when more bytes are needed; `nil` if not there.
    private func terminator(_ literal: StaticString, at index: Int, in base: UnsafePointer<UInt8>, count: Int, isFinal: Bool) -> Int? {
        let length = literal.utf8CodeUnitCount
        let available = min(length, count - index)
        for offset in 0..<available where base[index + offset] != literal.utf8Start[offset] { return nil }
        if available < length { return isFinal ? nil : -1 }
        return length
    }

    // MARK: Undeclared prefixes

    /// Prefixes feeds use without declaring them, with the one URI each always means.
    static let wellKnownNamespaces: [(prefix: String, uri: String)] = [
        ("atom", "http://www.w3.org/2005/Atom"),
        ("content", "http://purl.org/rss/1.0/modules/content/"),
        ("dc", "http://purl.org/dc/elements/1.1/"),
        ("dcterms", "http://purl.org/dc/terms/"),
        ("media", "http://search.yahoo.com/mrss/"),
        ("itunes", "http://www.itunes.com/dtds/podcast-1.0.dtd"),
        ("googleplay", "http://www.google.com/schemas/play-podcasts/1.0"),
        ("podcast", "https://podcastindex.org/namespace/1.0"),
        ("sy", "http://purl.org/rss/1.0/modules/syndication/"),
        ("slash", "http://purl.org/rss/1.0/modules/slash/"),
        ("wfw", "http://wellformedweb.org/CommentAPI/"),
        ("thr", "http://purl.org/syndication/thread/1.0"),
        ("feedburner", "http://rssnamespace.org/feedburner/ext/1.0"),
        ("georss", "http://www.georss.org/georss"),
        ("gml", "http://www.opengis.net/gml"),
        ("geo", "http://www.w3.org/2003/01/geo/wgs84_pos#"),
        ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
    ]

    @exclusivity(unchecked) private var rootSeen = false
    @exclusivity(unchecked) private var emittedBytes: Int64 = 0
    /// The prefixes declared on the root by the filter, not by the document.
    @exclusivity(unchecked) private(set) var injectedPrefixes: [[UInt8]] = []
    /// One bit for each injected prefix, at ``prefixKey(count:first:)``: most prefixed names in a feed use prefixes the
    /// document declared itself, and this rules them out without comparing them with every injected prefix (issue 18).
    @exclusivity(unchecked) private(set) var injectedPrefixKeys: UInt64 = 0

    /// A prefix's bit in ``injectedPrefixKeys``, from its length and first byte.
    @inline(__always) static func prefixKey(count: Int, first: UInt8) -> UInt64 {
        1 &<< UInt64((count &* 31 &+ Int(first)) & 63)
    }
    /// Where the declarations went in the bytes expat sees, and how long they are, to correct positions.
    @exclusivity(unchecked) private(set) var injection: (offset: Int64, length: Int, line: Int)?
    /// Newlines already sent before the root tag (counted only until the root is seen).
    @exclusivity(unchecked) private var newlinesBeforeRoot = 0
    /// How far past `<` the root start tag may reach before the filter leaves it alone.
    static let maximumRootTagBytes = 64 * 1024

    private static func newlines(in bytes: UnsafePointer<UInt8>, count: Int) -> Int {
        var lines = 0
        for index in 0..<max(0, count) where bytes[index] == 0x0A { lines += 1 }
        return lines
    }

    /// ` xmlns:p="uri"` for each well-known prefix the root start tag `tag` does not declare.
    private func declarationsMissing(from tag: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var declared: Set<String> = []
        let marker = Array("xmlns:".utf8)
        var index = 0
        while index + marker.count < tag.count {
            if tag[index] == 0x78, (0..<marker.count).allSatisfy({ tag[index + $0] == marker[$0] }) {
                index += marker.count
                let start = index
                while index < tag.count, Self.isNameCharacter(tag[index]), tag[index] != 0x3A { index += 1 }
                declared.insert(String(decoding: tag[start..<index], as: UTF8.self))
            } else {
                index += 1
            }
        }
        var bytes: [UInt8] = []
        for (prefix, uri) in Self.wellKnownNamespaces where !declared.contains(prefix) {
            bytes += Array(" xmlns:\(prefix)=\"\(uri)\"".utf8)
            injectedPrefixes.append(Array(prefix.utf8))
            injectedPrefixKeys |= Self.prefixKey(count: prefix.utf8.count, first: prefix.utf8.first!)
        }
        return bytes
    }

    /// The index of the `>` that ends the tag starting at `start`, outside quoted values; `nil` if not in the buffer.
    private static func tagEnd(from start: Int, in base: UnsafePointer<UInt8>, count: Int,
                               resuming search: inout RootTagSearch) -> Int? {
        var quote = search.quote
        var index = max(start + 1, start + search.scanned)
        while index < count {
            let byte = base[index]
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if byte == 0x22 || byte == 0x27 {
                quote = byte
            } else if byte == 0x3E {
                search = RootTagSearch()
                return index
            }
            index += 1
        }
        search = RootTagSearch(scanned: max(1, index - start), quote: quote)
        return nil
    }

    /// How far the search for the root start tag's `>` got in the bytes kept for the next chunk, so that a root tag
    /// arriving in many small pieces is searched once, not once per piece (fuzzing found a 23 KB tag of repaired bytes
    /// that took 21 s: the whole kept tag was searched again for every piece).
    struct RootTagSearch {
        /// Bytes from the `<` already searched.
        var scanned = 0
        /// The quote open at that point, or 0.
        var quote: UInt8 = 0
    }

    /// Collects the names of `<!ENTITY name …>` declarations (not parameter entities) from the DOCTYPE's text.
    private func learnDeclaredEntities() {
        let text = doctypeText
        doctypeText = []
        let marker = Array("<!ENTITY".utf8)
        var index = 0
        while index + marker.count < text.count {
            guard text[index] == 0x3C, Array(text[index..<index + marker.count]) == marker else { index += 1; continue }
            index += marker.count
            while index < text.count, [0x20, 0x09, 0x0A, 0x0D].contains(text[index]) { index += 1 }
            guard index < text.count, text[index] != 0x25 else { continue }  // % starts a parameter entity
            let start = index
            while index < text.count, Self.isNameCharacter(text[index]) { index += 1 }
            if index > start { declaredEntities.insert(String(decoding: text[start..<index], as: UTF8.self)) }
        }
    }

    // MARK: References

    private enum ReferenceAction {
        case needMore
        case keep(Int)
        /// Replace `length` bytes, and count the repair once the bytes before it were taken by expat.
        case replace(Int, [UInt8], XMLRepairs.ReferenceRepair)
    }

    /// What replaces a bare `&`.
    private static let escapedAmpersand: [UInt8] = Array("&amp;".utf8)

    /// Decides what to do with the `&` at `index`.
    private func reference(at index: Int, in base: UnsafePointer<UInt8>, count: Int, isFinal: Bool) -> ReferenceAction {
        let bare = ReferenceAction.replace(1, Self.escapedAmpersand, .bareAmpersand)
        var cursor = index + 1
        let limit = min(count, index + Self.maximumReferenceLength)
        func needMoreOrBare() -> ReferenceAction {
            if cursor >= count && !isFinal && cursor < index + Self.maximumReferenceLength { return .needMore }
            return bare
        }
        guard cursor < count else { return needMoreOrBare() }
        if base[cursor] == 0x23 {  // &#
            cursor += 1
            var radix: UInt32 = 10
            if cursor < count && (base[cursor] == 0x78) { radix = 16; cursor += 1 }  // x (XML allows only lowercase)
            var value: UInt32 = 0
            var digits = 0
            while cursor < limit, let digit = Self.digit(base[cursor], radix: radix) {
                value = value > 0x10FFFF ? value : value &* radix &+ digit
                digits += 1
                cursor += 1
            }
            guard cursor < limit else { return needMoreOrBare() }
            guard base[cursor] == 0x3B, digits > 0 else { return bare }
            let length = cursor + 1 - index
            if (0x80...0x9F).contains(value), let mapped = Self.windows1252[Int(value - 0x80)] {
                var replacement: [UInt8] = []
                HTMLEntities.appendReference(to: mapped, into: &replacement)
                return .replace(length, replacement, .windows1252Reference)
            }
            if Self.isXMLCharacter(value) { return .keep(length) }
            return .replace(length, [], .invalidCharacter)
        }
        guard Self.isNameStart(base[cursor]) else { return bare }
        while cursor < limit, Self.isNameCharacter(base[cursor]) { cursor += 1 }
        guard cursor < limit else { return needMoreOrBare() }
        guard base[cursor] == 0x3B else { return bare }
        let name = UnsafeBufferPointer(start: base + index + 1, count: cursor - index - 1)
        let length = cursor + 1 - index
        if Self.isPredefined(name) { return .keep(length) }
        let text = String(decoding: name, as: UTF8.self)
        if declaredEntities.contains(text) { return .keep(length) }
        if let replacement = HTMLEntities.replacement(for: text) {
            return .replace(length, replacement, .htmlEntity)
        }
        if hasDoctype { return .keep(length) }  // the DOCTYPE may declare it; expat knows
        return bare
    }

    private static func digit(_ byte: UInt8, radix: UInt32) -> UInt32? {
        switch byte {
        case 0x30...0x39: return UInt32(byte - 0x30)
        case 0x61...0x66 where radix == 16: return UInt32(byte - 0x61 + 10)
        case 0x41...0x46 where radix == 16: return UInt32(byte - 0x41 + 10)
        default: return nil
        }
    }

    private static func isNameStart(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || byte == 0x5F || byte == 0x3A || byte >= 0x80
    }

    private static func isNameCharacter(_ byte: UInt8) -> Bool {
        isNameStart(byte) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x2E
    }

    private static func isPredefined(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        switch name.count {
        case 2: return (name[0] == 0x6C || name[0] == 0x67) && name[1] == 0x74  // lt, gt
        case 3: return name[0] == 0x61 && name[1] == 0x6D && name[2] == 0x70  // amp
        case 4:
            return (name[0] == 0x71 && name[1] == 0x75 && name[2] == 0x6F && name[3] == 0x74)  // quot
                || (name[0] == 0x61 && name[1] == 0x70 && name[2] == 0x6F && name[3] == 0x73)  // apos
        default: return false
        }
    }

    static func isXMLCharacter(_ value: UInt32) -> Bool {
        value == 0x9 || value == 0xA || value == 0xD || (0x20...0xD7FF).contains(value)
            || (0xE000...0xFFFD).contains(value) || (0x10000...0x10FFFF).contains(value)
    }

    /// windows-1252's characters at 0x80–0x9F (WHATWG), `nil` where it has none.
    private static let windows1252: [UInt32?] = [
        0x20AC, nil, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, nil, 0x017D, nil,
        nil, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, nil, 0x017E, 0x0178,
    ]

    // MARK: UTF-8

    private enum UTF8Check {
        case valid(Int), incomplete, invalid, forbidden(Int)
    }

    /// Checks the UTF-8 sequence whose lead byte (≥ 0x80) is at `index`; U+FFFE and U+FFFF, well-formed but not XML
    /// characters, are `forbidden`.
    private static func utf8Sequence(at index: Int, in base: UnsafePointer<UInt8>, count: Int) -> UTF8Check {
        switch UTF8Sequence.check(at: index, in: base, count: count) {
        case .invalid: return .invalid
        case .incomplete: return .incomplete
        case .valid(let length):
            if base[index] == 0xEF && base[index + 1] == 0xBF && base[index + 2] >= 0xBE { return .forbidden(3) }
            return .valid(length)
        }
    }
}
