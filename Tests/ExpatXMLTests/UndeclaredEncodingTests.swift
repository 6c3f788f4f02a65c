import ExpatXML
import Foundation
import Testing

// Issue 16: UTF-32 as XML 1.0 Appendix F detects it, and documents that declare no encoding and are not UTF-8,
// named by libuchardet (ExpatXMLConfiguration.detectsUndeclaredEncoding).

/// Text in a legacy encoding, as Python's codecs wrote it (independent of glibc iconv and of libuchardet).
struct LegacySample: CustomTestStringConvertible, Sendable {
    let expectedName: String
    let text: String
    let hex: String
    var bytes: [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
    var testDescription: String { expectedName }
}

let legacySamples: [LegacySample] = [
    .init(expectedName: "windows-1251", text: "Новости: сегодня в Москве солнечно и тепло, температура воздуха достигнет двадцати градусов.",
          hex: "cdeee2eef1f2e83a20f1e5e3eee4edff20e220cceef1eae2e520f1eeebede5f7edee20e820f2e5efebee2c20f2e5ecefe5f0e0f2f3f0e020e2eee7e4f3f5e020e4eef1f2e8e3ede5f220e4e2e0e4f6e0f2e820e3f0e0e4f3f1eee22e"),
    .init(expectedName: "KOI8-R", text: "Новости: сегодня в Москве солнечно и тепло, температура воздуха достигнет двадцати градусов.",
          hex: "eecfd7cfd3d4c93a20d3c5c7cfc4ced120d720edcfd3cbd7c520d3cfcccec5dececf20c920d4c5d0cccf2c20d4c5cdd0c5d2c1d4d5d2c120d7cfdac4d5c8c120c4cfd3d4c9c7cec5d420c4d7c1c4c3c1d4c920c7d2c1c4d5d3cfd72e"),
    .init(expectedName: "windows-1252", text: "L’été à Paris — déjà vu, où les cafés débordent de touristes et d’habitués.",
          hex: "4c92e974e920e020506172697320972064e96ae02076752c206ff9206c657320636166e9732064e9626f7264656e7420646520746f75726973746573206574206492686162697475e9732e"),
    .init(expectedName: "windows-1250", text: "Zażółć gęślą jaźń — wszystko działa poprawnie w tej wiadomości.",
          hex: "5a61bff3b3e62067ea9c6cb9206a619ff120972077737a7973746b6f20647a6961b36120706f707261776e696520772074656a20776961646f6d6f9c63692e"),
    .init(expectedName: "Shift_JIS", text: "今日は東京でとても良い天気です。新しいニュースをお届けします。",
          hex: "8da193fa82cd938c8b9e82c582c682c482e097c782a293568b4382c582b78142905682b582a2836a8385815b835882f082a893cd82af82b582dc82b78142"),
    .init(expectedName: "EUC-KR", text: "오늘 서울의 날씨는 매우 좋습니다. 새로운 소식을 전해 드립니다.",
          hex: "bfc0b4c320bcadbfefc0c720b3afbebeb4c220b8c5bfec20c1c1bdc0b4cfb4d92e20bbf5b7cebfee20bcd2bdc4c0bb20c0fcc7d820b5e5b8b3b4cfb4d92e"),
]

/// UTF-32 bytes built by hand from the scalars (not through iconv), big- or little-endian.
func utf32(_ text: String, bigEndian: Bool) -> [UInt8] {
    text.unicodeScalars.flatMap { scalar -> [UInt8] in
        let value = scalar.value
        let bytes = [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        return bigEndian ? bytes : bytes.reversed()
    }
}

private var detecting: ExpatXMLConfiguration {
    var configuration = ExpatXMLConfiguration()
    configuration.detectsUndeclaredEncoding = true
    return configuration
}

@Suite("Encodings: UTF-32 and undeclared")
struct UndeclaredEncodingTests {
    @Test("UTF-32 big- and little-endian, with and without a byte-order mark (XML 1.0, Appendix F)",
          arguments: [(true, true), (true, false), (false, true), (false, false)])
    func utf32Documents(bigEndian: Bool, withMark: Bool) throws {
        let text = "Zürich — 東京 😀"
        var bytes = withMark ? (bigEndian ? [0x00, 0x00, 0xFE, 0xFF] : [0xFF, 0xFE, 0x00, 0x00]) : [UInt8]()
        bytes += utf32("<?xml version=\"1.0\" encoding=\"UTF-32\"?>\n<feed title=\"\(text)\"><entry>\(text)</entry></feed>", bigEndian: bigEndian)
        for chunk in [1 << 20, 3, 1] {
            let result = try parseText(bytes, chunk: chunk)
            #expect(result.collector.texts == [text], "chunk \(chunk)")
            #expect(result.collector.title == text)
            #expect(result.encoding == DocumentEncoding(name: bigEndian ? "UTF-32BE" : "UTF-32LE", label: nil, source: .byteOrderMark))
        }
    }

    @Test("UCS-4 in the unusual octet orders is a clear error", arguments: [[0x00, 0x00, 0xFF, 0xFE], [0x00, 0x00, 0x3C, 0x00], [0x00, 0x3C, 0x00, 0x00]] as [[UInt8]])
    func unusualOctetOrders(start: [UInt8]) {
        #expect {
            try parseText(start + [0x00, 0x00, 0x00, 0x00])
        } throws: { error in
            guard let error = error as? ExpatXMLError else { return false }
            return error.code == .unsupportedEncoding && error.message.contains("UCS-4")
        }
    }

    @Test func aUTF32LabelOnASCIIBytesMeansUTF8() throws {
        let result = try parseText(document(declaring: "UCS-4", text: Array("Zürich".utf8)))
        #expect(result.collector.texts == ["Zürich"])
        #expect(result.encoding?.name == "UTF-8")
    }

    @Test("undeclared legacy text is detected, whole and split anywhere", arguments: legacySamples)
    func detected(sample: LegacySample) throws {
        let bytes = document(declaring: nil, text: sample.bytes)
        for chunk in [1 << 20, 64, 7, 1] {
            let result = try parseText(bytes, configuration: detecting, chunk: chunk)
            #expect(result.collector.texts == [sample.text], "chunk \(chunk)")
            #expect(result.collector.title == sample.text)
            #expect(result.encoding?.name == sample.expectedName)
            #expect(result.encoding?.source == .detected)
            #expect(result.encoding?.label != nil)  // libuchardet's own name for it, for the report
        }
    }

    @Test func anXMLDeclarationWithoutAnEncodingDeclaresNothing() throws {
        let sample = legacySamples[0]
        var bytes = Array("<?xml version=\"1.0\"?>\n".utf8)
        bytes += document(declaring: nil, text: sample.bytes)
        let result = try parseText(bytes, configuration: detecting)
        #expect(result.collector.texts == [sample.text])
        #expect(result.encoding?.source == .detected)
    }

    @Test func validUTF8StaysUTF8AndDeclaredEncodingsAreNotSecondGuessed() throws {
        let utf8 = try parseText(document(declaring: nil, text: Array("Zürich — 東京".utf8)), configuration: detecting, chunk: 1)
        #expect(utf8.collector.texts == ["Zürich — 東京"])
        #expect(utf8.encoding == DocumentEncoding(name: "UTF-8", label: nil, source: .defaulted))
        // Declared: the declaration decides, even when uchardet would say otherwise.
        let declared = try parseText(document(declaring: "KOI8-R", text: legacySamples[1].bytes), configuration: detecting)
        #expect(declared.encoding == DocumentEncoding(name: "KOI8-R", label: "KOI8-R", source: .declaration))
        var hinted = detecting
        hinted.charsetHint = "windows-1251"
        let hint = try parseText(document(declaring: nil, text: legacySamples[0].bytes), configuration: hinted)
        #expect(hint.encoding?.source == .charsetHint)
        #expect(hint.collector.texts == [legacySamples[0].text])
    }

    @Test func withoutDetectionUndeclaredLegacyTextIsStillAnError() {
        #expect {
            try parseText(document(declaring: nil, text: legacySamples[0].bytes))
        } throws: { error in
            (error as? ExpatXMLError)?.code == .invalidToken
        }
    }

    @Test func bytesUchardetCannotNameFallBackToWindows1252() throws {
        // C1 bytes that windows-1252 leaves unassigned (0x81, 0x8D, 0x8F, 0x90, 0x9D) and nothing else: uchardet names
        // no charset, so windows-1252 is the last resort; iconv has no character for them, so they become U+FFFD.
        let result = try parseText(document(declaring: nil, text: [0x81, 0x8D, 0x8F, 0x90, 0x9D]), configuration: detecting)
        #expect(result.encoding == DocumentEncoding(name: "windows-1252", label: nil, source: .fallback))
        #expect(result.collector.texts == [String(repeating: "\u{FFFD}", count: 5)])
    }

    @Test func theSampleIsBoundedAndTheSplitDoesNotMatter() throws {
        // A 16-byte sample is all libuchardet sees (too little to be sure: here it takes the French for Central European
        // text). Whatever the split, the parser waits for exactly those bytes, so the answer and the decoded text are
        // the same for every split, and the whole document is read in that one encoding.
        var configuration = detecting
        configuration.encodingDetectionBytes = 16
        let bytes = document(declaring: nil, text: legacySamples[2].bytes)
        let whole = try parseText(bytes, configuration: configuration)
        #expect(whole.encoding?.source == .detected)
        #expect(whole.collector.texts.count == 1)
        for chunk in [16, 15, 5, 1] {
            let split = try parseText(bytes, configuration: configuration, chunk: chunk)
            #expect(split.encoding == whole.encoding, "chunk \(chunk)")
            #expect(split.collector.texts == whole.collector.texts, "chunk \(chunk)")
        }
    }
}
