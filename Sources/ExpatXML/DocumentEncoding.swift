/// The character encoding a parser chose for a document, and why.
public struct DocumentEncoding: Sendable, Hashable, CustomStringConvertible {
    /// Where the encoding came from, in order of precedence (RFC 7303, section 3).
    public enum Source: String, Sendable, Hashable {
        /// A byte-order mark, or UTF-16 or UTF-32 bytes that cannot be anything else (XML 1.0, Appendix F).
        case byteOrderMark
        /// ``ExpatXMLConfiguration/charsetHint``, for example an HTTP `Content-Type` charset.
        case charsetHint
        /// The `encoding` of the XML declaration.
        case declaration
        /// Nothing said otherwise, so UTF-8 (XML 1.0, section 4.3.3).
        case defaulted
        /// Nothing declared an encoding and the bytes are not UTF-8: libuchardet named it (``DocumentEncoding/label`` is
        /// its answer). Only with ``ExpatXMLConfiguration/detectsUndeclaredEncoding``.
        case detected
        /// Nothing declared an encoding, the bytes are not UTF-8, and libuchardet named nothing usable: windows-1252,
        /// the last resort (``DocumentEncoding/label`` is uchardet's answer, if it gave one).
        case fallback
        /// The bytes decided: the hint or the declaration named an encoding they contradict.
        ///
        /// Only with ``ExpatXMLConfiguration/correctsMislabelledEncoding``: UTF-8 bytes labelled with a single-byte
        /// charset are read as UTF-8, and bytes labelled UTF-8 that are mostly not UTF-8 as windows-1252.
        /// ``DocumentEncoding/label`` is the label they contradicted, ``DocumentEncoding/labelSource`` where it came from.
        case corrected
    }

    /// The decoder's canonical name, for example `UTF-8`, `windows-1252` or `Shift_JIS`.
    public var name: String
    /// The label as found in the hint or the declaration, or as libuchardet named it, before resolution; `nil` for BOMs
    /// and the default.
    public var label: String?
    /// Where it came from.
    public var source: Source
    /// Where the label the bytes contradicted came from, for ``Source/corrected``; `nil` otherwise.
    ///
    /// ``Source/charsetHint`` or ``Source/declaration``.
    public var labelSource: Source?

    /// Creates a value.
    public init(name: String, label: String?, source: Source, labelSource: Source? = nil) {
        self.name = name
        self.label = label
        self.source = source
        self.labelSource = labelSource
    }

    /// `name (source)`, with the label when it differs from the name.
    public var description: String {
        if source == .corrected {
            return "\(name) (corrected from \(labelSource?.rawValue ?? "label") '\(label ?? "")')"
        }
        if let label, label.lowercased() != name.lowercased() { return "\(name) (from \(source.rawValue) '\(label)')" }
        return "\(name) (\(source.rawValue))"
    }
}

/// How the bytes of an encoding reach expat.
enum Decoder: Equatable {
    /// expat decodes it itself; `expatName` is passed as the protocol encoding, or `nil` to let expat detect.
    case native(expatName: String?)
    /// A single-byte charset: expat decodes it through a 256-entry table built once with iconv.
    case singleByte(iconvName: String)
    /// A multi-byte charset: iconv transcodes the stream to UTF-8 in front of expat.
    case transcoded(iconvName: String)
}

/// One resolved encoding label.
struct EncodingLabel: Equatable {
    var canonicalName: String
    var decoder: Decoder

    /// Resolves a label the way the WHATWG Encoding Standard does for the encodings feeds use;
    /// labels it does not list go to iconv by name. `nil` when nothing can decode it.
    static func resolve(_ label: String) -> EncodingLabel? {
        let key = label.trimmingXMLWhitespace().lowercased()
        // An empty label names nothing (to iconv, "" is the locale's charset: output would depend on the environment).
        guard !key.isEmpty else { return nil }
        if let known = table[key] { return known }
        // iso-8859-N and windows-125N spelled in any of the usual ways.
        if let number = key.numberAfter(prefixes: ["iso-8859-", "iso8859-", "iso_8859-", "iso8859_", "iso_8859_", "iso-8859_"]) {
            if number == 1 { return table["windows-1252"] }
            if number == 9 { return table["windows-1254"] }
            if number == 11 { return table["windows-874"] }
            if (2...16).contains(number), number != 12 {
                return EncodingLabel(canonicalName: "ISO-8859-\(number)", decoder: .singleByte(iconvName: "ISO-8859-\(number)"))
            }
        }
        if let number = key.numberAfter(prefixes: ["windows-", "cp", "x-cp", "win"]), (1250...1258).contains(number) {
            return EncodingLabel(canonicalName: "windows-\(number)", decoder: .singleByte(iconvName: "CP\(number)"))
        }
        if Iconv.canDecode(label.trimmingXMLWhitespace()) {
            return EncodingLabel(canonicalName: label.trimmingXMLWhitespace(), decoder: .transcoded(iconvName: label.trimmingXMLWhitespace()))
        }
        return nil
    }

    private static let table: [String: EncodingLabel] = {
        var table: [String: EncodingLabel] = [:]
        func add(_ labels: [String], _ name: String, _ decoder: Decoder) {
            for label in labels { table[label] = EncodingLabel(canonicalName: name, decoder: decoder) }
        }
        add(["utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8"],
            "UTF-8", .native(expatName: "UTF-8"))
        add(["utf-16", "ucs-2", "iso-10646-ucs-2", "csunicode", "unicode"], "UTF-16", .native(expatName: "UTF-16"))
        add(["utf-16le"], "UTF-16LE", .native(expatName: "UTF-16LE"))
        add(["utf-16be", "unicodefffe"], "UTF-16BE", .native(expatName: "UTF-16BE"))
        // UTF-32 (UCS-4): iconv in front of expat. Only bytes that look like it can be it (see EncodingSniffer.decide).
        add(["utf-32", "ucs-4", "iso-10646-ucs-4", "csucs4", "utf-32be"], "UTF-32BE", .transcoded(iconvName: "UTF-32BE"))
        add(["utf-32le"], "UTF-32LE", .transcoded(iconvName: "UTF-32LE"))
        // WHATWG: latin1 and ascii labels decode as windows-1252, which only adds characters at 0x80-0x9F.
        add(["windows-1252", "cp1252", "x-cp1252", "iso-8859-1", "iso8859-1", "iso_8859-1", "iso88591", "latin1", "l1",
             "iso-ir-100", "iso_8859-1:1987", "csisolatin1", "ibm819", "cp819", "us-ascii", "ascii", "ansi_x3.4-1968",
             "iso-ir-6", "iso646-us", "us", "csascii"],
            "windows-1252", .singleByte(iconvName: "CP1252"))
        add(["windows-1254", "cp1254", "x-cp1254", "latin5", "l5", "iso-ir-148", "csisolatin5"],
            "windows-1254", .singleByte(iconvName: "CP1254"))
        add(["windows-874", "cp874", "dos-874", "tis-620", "iso-8859-11"], "windows-874", .singleByte(iconvName: "CP874"))
        add(["latin2", "l2", "csisolatin2"], "ISO-8859-2", .singleByte(iconvName: "ISO-8859-2"))
        add(["cyrillic", "csisolatincyrillic"], "ISO-8859-5", .singleByte(iconvName: "ISO-8859-5"))
        add(["greek", "csisolatingreek"], "ISO-8859-7", .singleByte(iconvName: "ISO-8859-7"))
        add(["koi8-r", "koi8r", "koi", "koi8", "cskoi8r", "koi8_r"], "KOI8-R", .singleByte(iconvName: "KOI8-R"))
        add(["koi8-u", "koi8-ru"], "KOI8-U", .singleByte(iconvName: "KOI8-U"))
        add(["ibm866", "cp866", "866", "csibm866"], "IBM866", .singleByte(iconvName: "CP866"))
        add(["macintosh", "mac", "x-mac-roman", "csmacintosh"], "macintosh", .singleByte(iconvName: "MACINTOSH"))
        add(["x-mac-cyrillic", "x-mac-ukrainian"], "x-mac-cyrillic", .singleByte(iconvName: "MAC-CYRILLIC"))
        // WHATWG: Shift_JIS decodes as windows-31j, EUC-KR as windows-949, GB2312 as GBK, Big5 as Big5-HKSCS.
        add(["shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji", "csshiftjis", "windows-31j", "ms932", "cp932"],
            "Shift_JIS", .transcoded(iconvName: "CP932"))
        add(["euc-jp", "eucjp", "x-euc-jp", "cseucpkdfmtjapanese"], "EUC-JP", .transcoded(iconvName: "EUC-JP"))
        add(["iso-2022-jp", "csiso2022jp"], "ISO-2022-JP", .transcoded(iconvName: "ISO-2022-JP"))
        add(["euc-kr", "euckr", "uhc", "ks_c_5601-1987", "ks_c_5601-1989", "ksc5601", "ksc_5601", "windows-949", "cp949",
             "korean", "csksc56011987", "iso-ir-149", "cseuckr"],
            "EUC-KR", .transcoded(iconvName: "CP949"))
        add(["gbk", "gb2312", "gb_2312", "gb_2312-80", "x-gbk", "cp936", "ms936", "windows-936", "chinese",
             "csgb2312", "csiso58gb231280", "iso-ir-58", "euc-cn", "euccn"],
            "GBK", .transcoded(iconvName: "GBK"))
        add(["gb18030"], "GB18030", .transcoded(iconvName: "GB18030"))
        add(["big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5", "big-5", "cp950"], "Big5", .transcoded(iconvName: "BIG5-HKSCS"))
        return table
    }()
}

/// Decides a document's encoding from its first bytes and an optional hint, before expat sees any byte.
enum EncodingSniffer {
    /// The outcome of looking at a prefix of the document.
    enum Outcome: Equatable {
        /// More bytes are needed to decide.
        case needMoreBytes
        /// Decided: the encoding to report (nil when expat must read a declaration we could not), and the decoder.
        case decided(DocumentEncoding?, Decoder)
        /// The label names an encoding nothing here can decode.
        case unsupported(label: String, source: DocumentEncoding.Source)
    }

    /// Looks at `prefix`, the document's first bytes; `isComplete` says no more bytes will come.
    /// The answer depends only on the bytes, never on how they were split into chunks.
    static func sniff(_ prefix: UnsafeRawBufferPointer, hint: String?, isComplete: Bool, maximumDeclarationBytes: Int) -> Outcome {
        let b = prefix
        // A byte-order mark wins over everything, the declaration included: the protocol encoding is set
        // explicitly, so expat cannot switch to a conflicting 8-bit declaration (RFC 7303, section 3).
        if b.count >= 3, b[0] == 0xEF, b[1] == 0xBB, b[2] == 0xBF {
            return .decided(DocumentEncoding(name: "UTF-8", label: nil, source: .byteOrderMark), .native(expatName: "UTF-8"))
        }
        // UTF-32 and UCS-4 (XML 1.0, Appendix F): four bytes tell, a byte-order mark or the first `<` (or, as for UTF-16
        // below, white space before the root). FF FE 00 00 is UTF-32LE's mark, not UTF-16LE's followed by U+0000,
        // which XML forbids.
        if b.count < 4 && !isComplete { return .needMoreBytes }
        if b.count >= 4 {
            let first4 = UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
            switch first4 {
            case 0x0000_FEFF, 0x0000_003C, 0x0000_0020, 0x0000_0009, 0x0000_000A, 0x0000_000D:
                return .decided(DocumentEncoding(name: "UTF-32BE", label: nil, source: .byteOrderMark), .transcoded(iconvName: "UTF-32BE"))
            case 0xFFFE_0000, 0x3C00_0000, 0x2000_0000, 0x0900_0000, 0x0A00_0000, 0x0D00_0000:
                return .decided(DocumentEncoding(name: "UTF-32LE", label: nil, source: .byteOrderMark), .transcoded(iconvName: "UTF-32LE"))
            case 0x0000_FFFE, 0xFEFF_0000, 0x0000_3C00, 0x003C_0000:
                // UCS-4 in the unusual octet orders 2143 and 3412, which iconv cannot decode.
                return .unsupported(label: "UCS-4 (octet order \(first4 == 0x0000_FFFE || first4 == 0x0000_3C00 ? "2143" : "3412"))",
                                    source: .byteOrderMark)
            default: break
            }
        }
        if b.count >= 2, (b[0] == 0xFE && b[1] == 0xFF) || (b[0] == 0xFF && b[1] == 0xFE) {
            let name = b[0] == 0xFE ? "UTF-16BE" : "UTF-16LE"
            return .decided(DocumentEncoding(name: name, label: nil, source: .byteOrderMark), .native(expatName: "UTF-16"))
        }
        // UTF-16 without a mark: an ASCII '<' or white space beside a zero byte cannot be anything else.
        let asciiStart: Set<UInt8> = [0x3C, 0x20, 0x09, 0x0A, 0x0D]
        if b.count >= 2, b[0] == 0x00, asciiStart.contains(b[1]) {
            return .decided(DocumentEncoding(name: "UTF-16BE", label: nil, source: .byteOrderMark), .native(expatName: "UTF-16BE"))
        }
        if b.count >= 2, asciiStart.contains(b[0]), b[1] == 0x00 {
            return .decided(DocumentEncoding(name: "UTF-16LE", label: nil, source: .byteOrderMark), .native(expatName: "UTF-16LE"))
        }
        // ASCII-compatible from here on.
        if let hint, !hint.trimmingXMLWhitespace().isEmpty {
            return decide(label: hint, source: .charsetHint)
        }
        let declarationStart: [UInt8] = Array("<?xml".utf8)
        let common = min(b.count, declarationStart.count)
        if !zip(b.prefix(common), declarationStart).allSatisfy({ $0 == $1 }) {
            return defaultUTF8
        }
        if b.count < 6 {
            return isComplete ? defaultUTF8 : .needMoreBytes
        }
        guard [0x20, 0x09, 0x0A, 0x0D].contains(b[5]) else { return defaultUTF8 }  // "<?xml-stylesheet" and the like
        let limit = min(b.count, maximumDeclarationBytes)
        var end: Int? = nil
        var index = 5
        while index + 1 < limit {
            if b[index] == 0x3F && b[index + 1] == 0x3E { end = index; break }
            index += 1
        }
        guard let end else {
            if b.count < maximumDeclarationBytes && !isComplete { return .needMoreBytes }
            return .decided(nil, .native(expatName: nil))  // expat reads the declaration itself
        }
        guard let label = pseudoAttribute("encoding", in: UnsafeRawBufferPointer(rebasing: b[5..<end])) else {
            return defaultUTF8
        }
        return decide(label: label, source: .declaration)
    }

    private static let defaultUTF8 = Outcome.decided(DocumentEncoding(name: "UTF-8", label: nil, source: .defaulted), .native(expatName: nil))

    /// Decides for ASCII-compatible bytes (UTF-16 and UTF-32 were ruled out before this is called).
    private static func decide(label: String, source: DocumentEncoding.Source) -> Outcome {
        guard let resolved = EncodingLabel.resolve(label) else { return .unsupported(label: label, source: source) }
        let isWide: Bool
        switch resolved.decoder {
        case .native(let expatName): isWide = expatName?.hasPrefix("UTF-16") == true
        case .transcoded: isWide = resolved.canonicalName.hasPrefix("UTF-32")
        case .singleByte: isWide = false
        }
        if isWide {
            // A label that claims UTF-16 or UTF-32 for bytes that read as ASCII is wrong about them (WHATWG does the same).
            return .decided(DocumentEncoding(name: "UTF-8", label: label, source: source), .native(expatName: "UTF-8"))
        }
        return .decided(DocumentEncoding(name: resolved.canonicalName, label: label, source: source), resolved.decoder)
    }

    /// The value of `name="value"` or `name='value'` inside an XML declaration's bytes.
    static func pseudoAttribute(_ name: String, in bytes: UnsafeRawBufferPointer) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let nameRange = text.range(of: name) else { return nil }
        var rest = text[nameRange.upperBound...].drop(while: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
        guard rest.first == "=" else { return nil }
        rest = rest.dropFirst().drop(while: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        rest = rest.dropFirst()
        guard let close = rest.firstIndex(of: quote) else { return nil }
        return String(rest[..<close])
    }
}

extension String {
    /// The decimal number following one of the prefixes, when the rest is all digits.
    func numberAfter(prefixes: [String]) -> Int? {
        for prefix in prefixes where hasPrefix(prefix) {
            if let number = Int(dropFirst(prefix.count)) { return number }
        }
        return nil
    }
}

extension String {
    /// The string without leading and trailing XML white space (space, tab, CR, LF). `package`: Syndication trims with
    /// it too.
    package func trimmingXMLWhitespace() -> String {
        // The common case, nothing to trim, read from the bytes in place: String's UTF-8 view indices cost ~100
        // instructions a call here (issue 18).
        let untouched = utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
            return bytes.isEmpty || (!isSpace(bytes[0]) && !isSpace(bytes[bytes.count - 1]))
        }
        if untouched == true { return self }
        let utf8 = self.utf8
        var start = utf8.startIndex
        var end = utf8.endIndex
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        while start < end, isSpace(utf8[start]) { start = utf8.index(after: start) }
        while end > start, isSpace(utf8[utf8.index(before: end)]) { end = utf8.index(before: end) }
        if start == utf8.startIndex && end == utf8.endIndex { return self }
        return String(self[start..<end])
    }
}
