import ExpatXML
import Foundation
import Testing

/// One encoding, a text and its bytes in that encoding (from Python's codecs, an implementation
/// independent of glibc iconv and of expat).
struct EncodedSample: CustomTestStringConvertible, Sendable {
    let label: String
    let expectedName: String
    let text: String
    let bytes: [UInt8]
    var testDescription: String { label }
}

let encodedSamples: [EncodedSample] = [
    .init(label: "windows-1250", expectedName: "windows-1250", text: "Żółć Łódź", bytes: [0xAF, 0xF3, 0xB3, 0xE6, 0x20, 0xA3, 0xF3, 0x64, 0x9F]),
    .init(label: "windows-1251", expectedName: "windows-1251", text: "Привет, мир",
          bytes: [0xCF, 0xF0, 0xE8, 0xE2, 0xE5, 0xF2, 0x2C, 0x20, 0xEC, 0xE8, 0xF0]),
    .init(label: "windows-1252", expectedName: "windows-1252", text: "Café “quoted” €",
          bytes: [0x43, 0x61, 0x66, 0xE9, 0x20, 0x93, 0x71, 0x75, 0x6F, 0x74, 0x65, 0x64, 0x94, 0x20, 0x80]),
    // WHATWG: an ISO-8859-1 label decodes as windows-1252, so 0x93/0x94 are curly quotes, not C1 controls.
    .init(label: "ISO-8859-1", expectedName: "windows-1252", text: "Café “quoted” €",
          bytes: [0x43, 0x61, 0x66, 0xE9, 0x20, 0x93, 0x71, 0x75, 0x6F, 0x74, 0x65, 0x64, 0x94, 0x20, 0x80]),
    .init(label: "ISO-8859-2", expectedName: "ISO-8859-2", text: "Żółć", bytes: [0xAF, 0xF3, 0xB3, 0xE6]),
    .init(label: "ISO-8859-5", expectedName: "ISO-8859-5", text: "Привет", bytes: [0xBF, 0xE0, 0xD8, 0xD2, 0xD5, 0xE2]),
    .init(label: "iso-8859-7", expectedName: "ISO-8859-7", text: "Καλημέρα", bytes: [0xCA, 0xE1, 0xEB, 0xE7, 0xEC, 0xDD, 0xF1, 0xE1]),
    .init(label: "ISO-8859-15", expectedName: "ISO-8859-15", text: "€uro œ", bytes: [0xA4, 0x75, 0x72, 0x6F, 0x20, 0xBD]),
    .init(label: "KOI8-R", expectedName: "KOI8-R", text: "Привет", bytes: [0xF0, 0xD2, 0xC9, 0xD7, 0xC5, 0xD4]),
    .init(label: "koi8-u", expectedName: "KOI8-U", text: "Ґанок і їжак",
          bytes: [0xBD, 0xC1, 0xCE, 0xCF, 0xCB, 0x20, 0xA6, 0x20, 0xA7, 0xD6, 0xC1, 0xCB]),
    .init(label: "Shift_JIS", expectedName: "Shift_JIS", text: "日本語のテキスト",
          bytes: [0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA, 0x82, 0xCC, 0x83, 0x65, 0x83, 0x4C, 0x83, 0x58, 0x83, 0x67]),
    .init(label: "EUC-JP", expectedName: "EUC-JP", text: "日本語のテキスト",
          bytes: [0xC6, 0xFC, 0xCB, 0xDC, 0xB8, 0xEC, 0xA4, 0xCE, 0xA5, 0xC6, 0xA5, 0xAD, 0xA5, 0xB9, 0xA5, 0xC8]),
    .init(label: "EUC-KR", expectedName: "EUC-KR", text: "한국어 텍스트",
          bytes: [0xC7, 0xD1, 0xB1, 0xB9, 0xBE, 0xEE, 0x20, 0xC5, 0xD8, 0xBD, 0xBA, 0xC6, 0xAE]),
    .init(label: "GB2312", expectedName: "GBK", text: "中文文本", bytes: [0xD6, 0xD0, 0xCE, 0xC4, 0xCE, 0xC4, 0xB1, 0xBE]),
    .init(label: "GBK", expectedName: "GBK", text: "中文文本", bytes: [0xD6, 0xD0, 0xCE, 0xC4, 0xCE, 0xC4, 0xB1, 0xBE]),
    // GB18030's four-byte sequences (0x81 0x37 0xBD 0x37 is U+2713) are why it cannot use expat's
    // unknown-encoding handler, whose sequence length must follow from the first byte.
    .init(label: "GB18030", expectedName: "GB18030", text: "中文 é ✓",
          bytes: [0xD6, 0xD0, 0xCE, 0xC4, 0x20, 0xA8, 0xA6, 0x20, 0x81, 0x37, 0xBD, 0x37]),
    .init(label: "Big5", expectedName: "Big5", text: "中文文本", bytes: [0xA4, 0xA4, 0xA4, 0xE5, 0xA4, 0xE5, 0xA5, 0xBB]),
]

/// A document whose declaration names `label`, with `text` as an attribute value and as element text.
func document(declaring label: String?, text: [UInt8]) -> [UInt8] {
    var bytes = Array((label.map { "<?xml version=\"1.0\" encoding=\"\($0)\"?>\n" } ?? "").utf8)
    bytes += Array("<feed title=\"".utf8) + text + Array("\"><entry>".utf8) + text + Array("</entry></feed>".utf8)
    return bytes
}

/// Collects the entry text and the feed's title attribute through the String API.
final class TextCollector: ExpatXMLParserDelegate {
    var title: String?
    var texts: [String] = []
    func parser(_ parser: ExpatXMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String]) {
        if elementName == "feed" { title = attributeDict["title"] }
    }
    func parser(_ parser: ExpatXMLParser, foundCharacters string: String) { texts.append(string) }
}

func parseText(_ bytes: [UInt8], configuration: ExpatXMLConfiguration = .init(), chunk: Int = 1 << 20)
    throws(ExpatXMLError) -> (collector: TextCollector, encoding: DocumentEncoding?)
{
    let collector = TextCollector()
    let parser = ExpatXMLParser(configuration: configuration)
    parser.delegate = collector
    var offset = 0
    while offset < bytes.count {
        try parser.parse(Array(bytes[offset..<min(bytes.count, offset + chunk)]))
        offset += chunk
    }
    try parser.finish()
    return (collector, parser.encoding)
}

@Suite("Encodings")
struct EncodingTests {
    @Test("declared encodings decode real bytes", arguments: encodedSamples)
    func declared(sample: EncodedSample) throws {
        let result = try parseText(document(declaring: sample.label, text: sample.bytes))
        #expect(result.collector.texts == [sample.text])
        #expect(result.collector.title == sample.text)
        #expect(result.encoding?.name == sample.expectedName)
        #expect(result.encoding?.source == .declaration)
        #expect(result.encoding?.label == sample.label)
    }

    @Test("decoding does not depend on chunk boundaries inside a character", arguments: encodedSamples)
    func bytewise(sample: EncodedSample) throws {
        let result = try parseText(document(declaring: sample.label, text: sample.bytes), chunk: 1)
        #expect(result.collector.texts == [sample.text])
        #expect(result.collector.title == sample.text)
    }

    @Test("the charset hint decodes a document without a declaration", arguments: encodedSamples)
    func hinted(sample: EncodedSample) throws {
        var configuration = ExpatXMLConfiguration()
        configuration.charsetHint = sample.label
        let result = try parseText(document(declaring: nil, text: sample.bytes), configuration: configuration)
        #expect(result.collector.texts == [sample.text])
        #expect(result.encoding?.source == .charsetHint)
    }

    @Test func hintOverridesDeclaration() throws {
        // RFC 7303: the external charset wins over the XML declaration.
        var configuration = ExpatXMLConfiguration()
        configuration.charsetHint = "windows-1251"
        let bytes = document(declaring: "ISO-8859-1", text: [0xCF, 0xF0, 0xE8, 0xE2, 0xE5, 0xF2])
        let result = try parseText(bytes, configuration: configuration)
        #expect(result.collector.texts == ["Привет"])
        #expect(result.encoding == DocumentEncoding(name: "windows-1251", label: "windows-1251", source: .charsetHint))
    }

    @Test func byteOrderMarkOverridesHint() throws {
        var configuration = ExpatXMLConfiguration()
        configuration.charsetHint = "windows-1252"
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + document(declaring: "UTF-8", text: Array("Zürich".utf8))
        let result = try parseText(bytes, configuration: configuration)
        #expect(result.collector.texts == ["Zürich"])
        #expect(result.encoding?.source == .byteOrderMark)
    }

    @Test("UTF-16 with and without a byte-order mark", arguments: [
        (String.Encoding.utf16LittleEndian, true), (.utf16BigEndian, true), (.utf16LittleEndian, false), (.utf16BigEndian, false),
    ])
    func utf16(encoding: String.Encoding, withBOM: Bool) throws {
        let xml = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><feed title=\"東京\"><entry>Zürich — 東京 😀</entry></feed>"
        var bytes = Array(xml.data(using: encoding)!)
        if withBOM { bytes = (encoding == .utf16LittleEndian ? [0xFF, 0xFE] : [0xFE, 0xFF]) + bytes }
        var configuration = ExpatXMLConfiguration()
        configuration.charsetHint = "iso-8859-1"  // ignored: the bytes can only be UTF-16
        let whole = try parseText(bytes, configuration: configuration)
        #expect(whole.collector.texts == ["Zürich — 東京 😀"])
        #expect(whole.collector.title == "東京")
        #expect(whole.encoding?.name == (encoding == .utf16LittleEndian ? "UTF-16LE" : "UTF-16BE"))
        let bytewise = try parseText(bytes, configuration: configuration, chunk: 1)
        #expect(bytewise.collector.texts == whole.collector.texts)
    }

    @Test func undeclaredMeansUTF8() throws {
        let result = try parseText(document(declaring: nil, text: Array("Zürich — 東京".utf8)))
        #expect(result.collector.texts == ["Zürich — 東京"])
        #expect(result.encoding == DocumentEncoding(name: "UTF-8", label: nil, source: .defaulted))
    }

    @Test func utf16LabelOnASCIIBytesMeansUTF8() throws {
        // A declaration that was readable as single bytes cannot be UTF-16: it is UTF-8 that lies about itself.
        let result = try parseText(document(declaring: "UTF-16", text: Array("Zürich".utf8)))
        #expect(result.collector.texts == ["Zürich"])
        #expect(result.encoding?.name == "UTF-8")
    }

    @Test("an unknown encoding is a clear error, not mojibake", arguments: ["x-klingon", "EBCDIC-nonsense-42"])
    func unsupported(label: String) {
        let recorder = EventRecorder()
        let parser = XMLPushParser(handler: recorder, source: "feed.xml")
        #expect {
            try parser.parse(document(declaring: label, text: [0xC0, 0xC1]))
            try parser.finish()
        } throws: { error in
            guard let error = error as? ExpatXMLError else { return false }
            return error.code == .unsupportedEncoding && error.message.contains(label) && error.source == "feed.xml"
        }
        #expect(recorder.events.isEmpty)  // nothing was decoded wrongly and delivered
    }

    @Test func unsupportedHintIsAnError() {
        var configuration = ExpatXMLConfiguration()
        configuration.charsetHint = "x-no-such-charset"
        #expect(throws: ExpatXMLError.self) { try parseText(document(declaring: nil, text: Array("a".utf8)), configuration: configuration) }
    }

    @Test func invalidMultiByteSequencesBecomeReplacementCharacters() throws {
        // 0x81 0x20 is not a Shift_JIS character; 0x93 at the very end is a truncated one.
        let recorder = EventRecorder()
        let parser = XMLPushParser(handler: recorder)
        var bytes = Array("<?xml version=\"1.0\" encoding=\"Shift_JIS\"?><r>".utf8)
        bytes += [0x93, 0xFA, 0x81, 0x20, 0x96, 0x7B] + Array("</r>".utf8)
        try parser.parse(bytes)
        try parser.finish()
        #expect(recorder.events.contains("text \"日\u{FFFD} 本\""))
        #expect(parser.encodingReplacements == 1)
    }

    @Test func latin1TextWithoutDeclarationIsAnErrorNotMojibake() {
        // No declaration and no hint means UTF-8; a lone 0xE9 is then invalid, and expat says so.
        #expect {
            try parseText(document(declaring: nil, text: [0x43, 0x61, 0x66, 0xE9]))
        } throws: { error in
            (error as? ExpatXMLError)?.code == .invalidToken
        }
    }

    @Test func declarationBeyondTheSniffLimitStillDecodesSingleByteCharsets() throws {
        // Padding inside the declaration pushes "?>" past the sniffing window; expat then reads the
        // declaration itself and asks the unknown-encoding handler, which supplies the table.
        var configuration = ExpatXMLConfiguration()
        configuration.maximumDeclarationBytes = 16
        let bytes = Array("<?xml version=\"1.0\"       encoding=\"KOI8-R\"?><r>".utf8) + [0xF0, 0xD2, 0xC9, 0xD7, 0xC5, 0xD4] + Array("</r>".utf8)
        let collector = TextCollector()
        let parser = ExpatXMLParser(configuration: configuration)
        parser.delegate = collector
        try parser.parse(data: Data(bytes))
        #expect(collector.texts == ["Привет"])
    }
}
