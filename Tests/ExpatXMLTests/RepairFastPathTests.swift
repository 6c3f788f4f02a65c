@testable import ExpatXML
import TestSupport
import Testing

/// What a repair filter sent for one document fed in given pieces: the bytes out of each `process` call, the repairs,
/// and the namespace declarations it added.
struct FilterOutput: Equatable {
    var calls: [[UInt8]] = []
    var repairs = XMLRepairs()
    var injectedPrefixes: [[UInt8]] = []
    var injectionOffset: Int64?
    var injectionLength: Int?
    var injectionLine: Int?

    var bytes: [UInt8] { calls.flatMap { $0 } }

    static func filter(_ bytes: [UInt8], boundaries: [Int], validatesUTF8: Bool, declaresWellKnownPrefixes: Bool,
                       takesFastPath: Bool) -> FilterOutput {
        let filter = InputRepairFilter(validatesUTF8: validatesUTF8, declaresWellKnownPrefixes: declaresWellKnownPrefixes)
        filter.takesFastPath = takesFastPath
        var output = FilterOutput()
        var start = 0
        for end in boundaries + [bytes.count] {
            var call: [UInt8] = []
            bytes[start..<end].withUnsafeBytes { chunk in
                try? filter.process(chunk, isFinal: end == bytes.count) { (piece) throws(ExpatXMLError) in call.append(contentsOf: piece) }
            }
            output.calls.append(call)
            start = end
        }
        output.repairs = filter.repairs
        output.injectedPrefixes = filter.injectedPrefixes
        output.injectionOffset = filter.injection?.offset
        output.injectionLength = filter.injection?.length
        output.injectionLine = filter.injection?.line
        return output
    }
}

/// Random documents of the pieces that matter to the repair filter: markup of every kind, references kept and
/// repaired, valid and invalid UTF-8, controls, and the bytes that end each mode, in any order.
enum RepairDocuments {
    static let fragments: [[UInt8]] = {
        let text: [String] = [
            "abc", " ", "  \n    ", "\t", "\r\n", "Zürich", "東京", "😀", " — ", "x", "señor São Paulo Москва ",
            "&lt;", "&gt;", "&amp;", "&quot;", "&apos;", "&#233;", "&#xE9;", "&#X41;", "&#150;", "&#x81;", "&#x9D;", "&#2;",
            "&#x110000;", "&#99999999999;", "&#;", "&#x;", "&#65", "&nbsp;", "&eacute;", "&copy;", "&bogus;", "&", "&amp",
            "&lt", "&#0000000000000000000000000000000000000000065;", "&a-b.c;", "& ", "&&", "&#xFFFE;", "&#xD800;", "&#1114111;",
            "&l", "&q", "&quo", "&apos", "&#x1F600;",
            "<a>", "</a>", "<a ", ">", "/>", "<b x=\"1\">", "<c y='v&amp;w' z=\"&nbsp;\"/>", "\"", "'", "=",
            "<![CDATA[", "]]>", "]", "]]", "<![CDATA[a]b]]c]]]>", "<!--", "-->", "-", "--", "<!-- - -- -->", "<?pi ", "?>", "?",
            "<?x a?b?>", "<!DOCTYPE r [<!ENTITY copy \"x\">]>", "<!DOCTYPE r>", "<!DOCTYPE r [<!-- ] --> <!ENTITY e 'y'>]>",
            "<!X>", "<", "</", "<!", "<!-", "<!D", "<?", "<1", "< ", "<dc:creator>", "</dc:creator>", "<media:content url='u'/>",
            "<rss version=\"2.0\">", "<rss xmlns:dc=\"http://purl.org/dc/elements/1.1/\">", "<?xml version=\"1.0\"?>",
        ]
        let raw: [[UInt8]] = [
            [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xC3], [0xC3, 0x28], [0xE2, 0x82], [0xE2, 0x82, 0xAC], [0xE0, 0x80, 0x80],
            [0xE0, 0xA0, 0x80], [0xED, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEF, 0xBF, 0xBE], [0xEF, 0xBF, 0xBF], [0xEF, 0xBF, 0xBD],
            [0xEE, 0x80, 0x80], [0xF0, 0x9F, 0x98], [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0xFE], [0x00], [0x01], [0x0B], [0x0C], [0x1F], [0x7F],
            [0xE9], [0xE4, 0xF6, 0xFC],  // Latin-1 bytes: invalid in UTF-8, letters in other encodings
        ]
        return text.map { Array($0.utf8) } + raw
    }()

    static func document(_ random: inout SplitMix64) -> [UInt8] {
        var bytes: [UInt8] = []
        switch random.next(below: 4) {
        case 0: bytes += Array("<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel><item><description>".utf8)
        case 1: bytes += Array("<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><title>".utf8)
        default: break
        }
        for _ in 0..<random.next(below: 48) {
            // Plain text between pieces, now and then long enough to cross the wide scan's 16-byte blocks.
            if random.next(below: 3) == 0 { bytes += Array(repeating: UInt8(0x61 + random.next(below: 26)), count: random.next(below: 40)) }
            bytes += fragments[random.next(below: fragments.count)]
        }
        return bytes
    }

    static func boundaries(_ count: Int, _ random: inout SplitMix64) -> [Int] {
        guard count > 1 else { return [] }
        return (0..<random.next(below: 6)).map { _ in random.next(below: count + 1) }.sorted()
    }
}

@Suite struct RepairFastPathTests {
    static let settings: [(validatesUTF8: Bool, declaresWellKnownPrefixes: Bool)] = [(true, true), (true, false), (false, true), (false, false)]

    /// The fast path (skipUnchanged) only steps over what the byte-wise logic would pass unchanged and changes mode
    /// where it would: with it and without it, every call sends the same bytes, with the same repairs and added
    /// declarations, for random documents in random pieces, and byte by byte. (Checked once, 80,000 documents, against
    /// a copy of the filter as it was before the fast path: the same bytes from every call.)
    @Test(arguments: 0..<4)
    func fastPathChangesNothing(setting: Int) {
        let (validatesUTF8, declares) = Self.settings[setting]
        var random = SplitMix64(seed: 0xFA57 &+ UInt64(setting))
        for _ in 0..<3_000 {
            let bytes = RepairDocuments.document(&random)
            var splits = [[], RepairDocuments.boundaries(bytes.count, &random)]
            if random.next(below: 10) == 0 { splits.append(Array(0...bytes.count)) }
            var whole: FilterOutput?
            for boundaries in splits {
                let fast = FilterOutput.filter(bytes, boundaries: boundaries, validatesUTF8: validatesUTF8,
                                               declaresWellKnownPrefixes: declares, takesFastPath: true)
                let byteWise = FilterOutput.filter(bytes, boundaries: boundaries, validatesUTF8: validatesUTF8,
                                                   declaresWellKnownPrefixes: declares, takesFastPath: false)
                #expect(fast == byteWise, "\(bytes) split at \(boundaries)")
                if fast != byteWise { return }
                // And the filter's own promise: the same bytes and repairs whatever the split.
                if let whole {
                    #expect(fast.bytes == whole.bytes && fast.repairs == whole.repairs, "\(bytes) split at \(boundaries)")
                    if fast.bytes != whole.bytes || fast.repairs != whole.repairs { return }
                }
                whole = whole ?? fast
            }
        }
    }

    /// A feed like the benchmark's: escaped HTML, CDATA, attributes, non-ASCII text; long enough for many blocks.
    @Test func aCleanFeedGoesThroughUnchangedWithNoRepairs() {
        let item = """
            <item><title>Zürich — 東京 #1</title><category domain="https://x.example/t?a=1&amp;b=2">Sport</category>\
            <description>&lt;p&gt;señor &lt;a href=&quot;https://x.example/&quot;&gt;more&lt;/a&gt; &#233;&#x1F600;&lt;/p&gt;</description>\
            <content:encoded><![CDATA[<p>Москва & 北京 ] ]] </p>]]></content:encoded><!-- a - comment --><?pi x?></item>\n
            """
        let document = Array(("<?xml version=\"1.0\"?>\n<rss version=\"2.0\" xmlns:content=\"http://purl.org/rss/1.0/modules/content/\">"
                                + String(repeating: item, count: 40) + "</rss>").utf8)
        for boundaries in [[], [1000, 1001, 5003], Array(stride(from: 7, to: document.count, by: 97))] {
            let output = FilterOutput.filter(document, boundaries: boundaries, validatesUTF8: true, declaresWellKnownPrefixes: false,
                                             takesFastPath: true)
            #expect(output.bytes.elementsEqual(document), "split at \(boundaries.prefix(3))…")
            #expect(output.repairs.isEmpty)
        }
    }

    /// Each repair the byte-wise logic makes is still made when the damage sits among bytes the fast path steps over.
    @Test(arguments: [
        ("a&nbsp;b", "a&#xA0;b", "htmlEntities"), ("a & b", "a &amp; b", "bareAmpersands"), ("a&#150;b", "a&#x2013;b", "windows1252References"),
        ("a\u{01}b", "ab", "invalidCharacters"), ("a&#2;b", "ab", "invalidCharacters"),
    ])
    func repairsAmongCleanBytes(damaged: String, repaired: String, kind: String) {
        let padding = String(repeating: "clean text é 東 &lt;&amp;&quot;&#65; ", count: 3)
        for (open, close) in [("<t>", "</t>"), ("<t a=\"", "\"/>")] {
            let document = Array("<r>\(open)\(padding)\(damaged)\(padding)\(close)</r>".utf8)
            let output = FilterOutput.filter(document, boundaries: [], validatesUTF8: true, declaresWellKnownPrefixes: false, takesFastPath: true)
            #expect(output.bytes == Array("<r>\(open)\(padding)\(repaired)\(padding)\(close)</r>".utf8), "\(open)")
            #expect(Dictionary(uniqueKeysWithValues: output.repairs.counts) == [kind: 1], "\(open)")
        }
    }

    /// Invalid UTF-8 after valid non-ASCII text (the fast path's run of characters ends there) becomes U+FFFD.
    @Test func invalidUTF8AfterAValidRun() {
        for bad: [UInt8] in [[0x80], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80]] {
            let document = Array("<r>Zürich 東京".utf8) + bad + Array("ok</r>".utf8)
            let output = FilterOutput.filter(document, boundaries: [], validatesUTF8: true, declaresWellKnownPrefixes: false, takesFastPath: true)
            let byteWise = FilterOutput.filter(document, boundaries: [], validatesUTF8: true, declaresWellKnownPrefixes: false, takesFastPath: false)
            #expect(output == byteWise)
            #expect(output.repairs.invalidUTF8 >= 1, "\(bad)")
            #expect(output.bytes.count > document.count, "U+FFFD is longer than the bytes it replaces: \(bad)")
        }
    }
}

extension RepairFastPathTests {
    /// The references the filter writes for HTML entities and windows-1252 numbers are built byte by byte now: the
    /// same text as `String(_:radix:uppercase:)` gave, for every scalar in the entity table and a spread of others.
    @Test func characterReferencesAreWrittenAsBefore() {
        var scalars = Set(HTMLEntities.table.values.flatMap { $0 })
        scalars.formUnion([0, 1, 9, 0xA, 0xF, 0x10, 0xFF, 0x100, 0x2013, 0xFFFD, 0x10000, 0x1D536, 0x10FFFF, 0xFFFF_FFFF])
        var random = SplitMix64(seed: 0x4E7)
        for _ in 0..<1_000 { scalars.insert(UInt32(truncatingIfNeeded: random.next())) }
        for scalar in scalars {
            var bytes: [UInt8] = []
            HTMLEntities.appendReference(to: scalar, into: &bytes)
            #expect(bytes == Array("&#x\(String(scalar, radix: 16, uppercase: true));".utf8), "\(scalar)")
        }
        #expect(HTMLEntities.replacement(for: "nbsp") == Array("&#xA0;".utf8))
        #expect(HTMLEntities.replacement(for: "NotEqualTilde") == Array("&#x2242;&#x338;".utf8))
        #expect(HTMLEntities.replacement(for: "bogus") == nil)
    }
}

extension RepairFastPathTests {
    /// The entity table read from the list's bytes holds what reading it as `Character`s (as before) gave.
    @Test func entityTableIsReadAsBefore() {
        var expected: [String: [UInt32]] = [:]
        for line in HTMLEntities.list.split(separator: "\n") {
            let fields = line.split(separator: " ")
            expected[String(fields[0])] = fields.dropFirst().compactMap { UInt32($0, radix: 16) }
        }
        #expect(expected.count > 2_000)
        #expect(HTMLEntities.table == expected)
        #expect(HTMLEntities.table["eacute"] == [0xE9])
        #expect(HTMLEntities.table["zwnj"] == [0x200C])
    }
}
