import ExpatXML
import Foundation
import Testing

// ExpatXMLConfiguration.correctsMislabelledEncoding: bytes that contradict their charset label are read as what they
// are, UTF-8 labelled single-byte as UTF-8, windows-1252 labelled UTF-8 as windows-1252.

private func correcting(hint: String? = nil, repairs: Bool = false) -> ExpatXMLConfiguration {
    var configuration = ExpatXMLConfiguration()
    configuration.correctsMislabelledEncoding = true
    configuration.charsetHint = hint
    configuration.repairsMalformedInput = repairs
    return configuration
}

/// Every label the WHATWG Encoding Standard gives windows-1252 (latin1 and ASCII among them).
let windows1252Labels = ["ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1", "iso-ir-100",
                         "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1", "us-ascii", "windows-1252",
                         "x-cp1252"]

/// French in windows-1252 (Python's cp1252 codec): every accented letter is a byte that begins no UTF-8 sequence.
let frenchWindows1252 = legacySamples[2]

@Suite("Encodings: labels the bytes contradict")
struct MislabelledEncodingTests {
    static let utf8Text = "Café crème — naïve “quotes” Zürich 東京"

    @Test("UTF-8 bytes declared single-byte are read as UTF-8, whole and split anywhere",
          arguments: ["iso-8859-1", "latin1", "us-ascii", "windows-1252", "ISO-8859-2", "windows-1251", "KOI8-R", "macintosh"])
    func utf8DeclaredSingleByte(label: String) throws {
        let bytes = document(declaring: label, text: Array(Self.utf8Text.utf8))
        for chunk in [1 << 20, 64, 7, 1] {
            let result = try parseText(bytes, configuration: correcting(), chunk: chunk)
            #expect(result.collector.texts == [Self.utf8Text], "chunk \(chunk)")
            #expect(result.collector.title == Self.utf8Text)
            #expect(result.encoding == DocumentEncoding(name: "UTF-8", label: label, source: .corrected, labelSource: .declaration))
        }
    }

    @Test func utf8BytesWithASingleByteHintAreReadAsUTF8() throws {
        let bytes = document(declaring: "UTF-8", text: Array(Self.utf8Text.utf8))
        let result = try parseText(bytes, configuration: correcting(hint: "ISO-8859-1"), chunk: 3)
        #expect(result.collector.texts == [Self.utf8Text])
        #expect(result.encoding == DocumentEncoding(name: "UTF-8", label: "ISO-8859-1", source: .corrected, labelSource: .charsetHint))
    }

    @Test("windows-1252 bytes labelled UTF-8 are read as windows-1252", arguments: [false, true])
    func windows1252LabelledUTF8(byHint: Bool) throws {
        let bytes = document(declaring: byHint ? nil : "utf-8", text: frenchWindows1252.bytes)
        for chunk in [1 << 20, 5, 1] {
            let result = try parseText(bytes, configuration: correcting(hint: byHint ? "UTF-8" : nil), chunk: chunk)
            #expect(result.collector.texts == [frenchWindows1252.text], "chunk \(chunk)")
            #expect(result.collector.title == frenchWindows1252.text)
            #expect(result.encoding == DocumentEncoding(name: "windows-1252", label: byHint ? "UTF-8" : "utf-8", source: .corrected,
                                                        labelSource: byHint ? .charsetHint : .declaration))
        }
    }

    @Test func aFewBadBytesInUTF8StayUTF8AndAreRepaired() throws {
        // Four well-formed sequences and one latin1 byte among the first characters above 0x7F: UTF-8, repaired.
        let text = Array("Zürich — über ".utf8) + [0xE9] + Array(" café".utf8)
        let parser = XMLPushParser(handler: CountingHandler(), configuration: correcting(repairs: true))
        try parser.parse(document(declaring: "UTF-8", text: text))
        try parser.finish()
        #expect(parser.encoding == DocumentEncoding(name: "UTF-8", label: "UTF-8", source: .declaration))
        #expect(parser.repairs.invalidUTF8 == 2)  // the title attribute's byte and the text's
        let strings = try parseText(document(declaring: "UTF-8", text: text), configuration: correcting(repairs: true))
        #expect(strings.collector.texts == ["Zürich — über \u{FFFD} café"])
    }

    @Test("labels the bytes bear out stand", arguments: encodedSamples)
    func declaredSamplesStand(sample: EncodedSample) throws {
        let result = try parseText(document(declaring: sample.label, text: sample.bytes), configuration: correcting(), chunk: 2)
        #expect(result.collector.texts == [sample.text])
        #expect(result.encoding?.name == sample.expectedName)
        #expect(result.encoding?.source == .declaration)
    }

    @Test func withoutTheOptionTheLabelIsObeyed() throws {
        let result = try parseText(document(declaring: "iso-8859-1", text: Array("Café".utf8)))
        #expect(result.collector.texts == ["CafÃ©"])
        #expect(result.encoding?.source == .declaration)
        #expect(throws: ExpatXMLError.self) { try parseText(document(declaring: "UTF-8", text: frenchWindows1252.bytes)) }
    }

    @Test func aByteOrderMarkIsNeverOverruled() throws {
        let bytes = [0xEF, 0xBB, 0xBF] + document(declaring: "UTF-8", text: Array("ok ".utf8) + [0xE9, 0xE8])
        let result = try parseText(bytes, configuration: correcting(repairs: true))
        #expect(result.encoding?.source == .byteOrderMark)
        #expect(result.collector.texts == ["ok \u{FFFD}\u{FFFD}"])
    }

    @Test func asciiLeavesTheLabelAsItIs() throws {
        let result = try parseText(document(declaring: "windows-1252", text: Array("plain text".utf8)), configuration: correcting(), chunk: 1)
        #expect(result.encoding == DocumentEncoding(name: "windows-1252", label: "windows-1252", source: .declaration))
        #expect(result.collector.texts == ["plain text"])
    }

    @Test func oneBadByteKeepsASingleByteLabel() throws {
        // Three well-formed UTF-8 sequences, then a byte that begins none: the bytes do not contradict windows-1252.
        let bytes = document(declaring: "windows-1252", text: [0xC3, 0xA9, 0xC2, 0xAE, 0xC3, 0xBC, 0x20, 0xE9])
        let result = try parseText(bytes, configuration: correcting(), chunk: 1)
        #expect(result.encoding?.source == .declaration)
        #expect(result.collector.texts == ["Ã©Â®Ã¼ é"])
    }

    @Test func theWindowIsBoundedAndTheSplitDoesNotMatter() throws {
        // One well-formed sequence, then more than the 4 KiB window of ASCII, then a byte that is not UTF-8: the window
        // decided (UTF-8) before that byte, which is then repaired rather than read as windows-1252.
        let padding = [UInt8](repeating: 0x61, count: 5000)
        let text = Array("é".utf8) + padding + [0xE9]
        let bytes = document(declaring: "iso-8859-1", text: text)
        let expected = "é" + String(repeating: "a", count: 5000) + "\u{FFFD}"
        for chunk in [1 << 20, 4096, 100, 1] {
            let result = try parseText(bytes, configuration: correcting(repairs: true), chunk: chunk)
            #expect(result.encoding?.source == .corrected, "chunk \(chunk)")
            #expect(result.collector.texts == [expected], "chunk \(chunk)")
        }
        // And the other way round: a latin1 byte, then the window of ASCII, then UTF-8: windows-1252 throughout.
        let other = document(declaring: "UTF-8", text: [0xE9] + padding + Array("ü".utf8))
        for chunk in [1 << 20, 100, 1] {
            let result = try parseText(other, configuration: correcting(), chunk: chunk)
            #expect(result.encoding?.name == "windows-1252", "chunk \(chunk)")
            #expect(result.collector.texts == ["é" + String(repeating: "a", count: 5000) + "Ã¼"], "chunk \(chunk)")
        }
    }

    @Test func aFirstMiBOfASCIILeavesTheLabelUnchecked() throws {
        // A latin1 byte at offset 2^20 - 1 is checked (windows-1252); at 2^20 it is past the check (UTF-8, repaired).
        let head = Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?><feed><entry>".utf8)
        for (offset, expected) in [((1 << 20) - 1, "é"), (1 << 20, "\u{FFFD}")] {
            let bytes = head + [UInt8](repeating: 0x61, count: offset - head.count) + [0xE9] + Array("</entry></feed>".utf8)
            for chunk in [1 << 20, 65_536, 1000] {
                let result = try parseText(bytes, configuration: correcting(repairs: true), chunk: chunk)
                #expect(result.collector.texts.first?.hasSuffix("a" + expected) == true, "offset \(offset), chunk \(chunk)")
                #expect(result.encoding?.source == (expected == "é" ? .corrected : .declaration), "offset \(offset), chunk \(chunk)")
            }
        }
    }

    @Test func eventsBeforeTheFirstNonASCIIByteAreNotHeldBack() throws {
        // ASCII reads the same under either label: the elements before the first byte above 0x7F come out at once.
        let handler = CountingHandler()
        let parser = XMLPushParser(handler: handler, configuration: correcting())
        try parser.parse(Array("<?xml version=\"1.0\" encoding=\"iso-8859-1\"?><feed><a>x</a><b>y</b>".utf8))
        #expect(handler.startElements == 3)
        try parser.parse(Array("<c>Caf".utf8) + [0xC3])
        #expect(handler.startElements == 4)  // `<c>` came before the held bytes
        try parser.parse([0xA9] + Array("</c></feed>".utf8))
        try parser.finish()
        #expect(parser.encoding?.source == .corrected)
    }

    @Test("every WHATWG label of windows-1252 decodes windows-1252's bytes as windows-1252, declared or as a hint",
          arguments: windows1252Labels)
    func latin1AndASCIILabelsAreWindows1252(label: String) throws {
        // 0x93 and 0x94 are curly quotes in windows-1252 (C1 controls in ISO-8859-1), 0x80 the euro sign.
        let text: [UInt8] = [0x43, 0x61, 0x66, 0xE9, 0x20, 0x93, 0x71, 0x94, 0x20, 0x80]
        // A colon cannot be in a declared encoding name (XML 1.0, EncName): that label only comes as a hint.
        if !label.contains(":") {
            let declared = try parseText(document(declaring: label, text: text), configuration: correcting())
            #expect(declared.collector.texts == ["Café “q” €"])
            #expect(declared.encoding == DocumentEncoding(name: "windows-1252", label: label, source: .declaration))
            let strict = try parseText(document(declaring: label, text: text))
            #expect(strict.collector.texts == ["Café “q” €"])
        }
        let hinted = try parseText(document(declaring: nil, text: text), configuration: correcting(hint: label))
        #expect(hinted.collector.texts == ["Café “q” €"])
        #expect(hinted.encoding?.name == "windows-1252")
    }
}

/// Counts start tags.
private final class CountingHandler: XMLEventHandler {
    var startElements = 0
    func startElement(_ name: XMLName, attributes: XMLAttributes) { startElements += 1 }
}
