import ExpatXML
import Foundation
import Testing

/// Inputs the libFuzzer harnesses (Fuzz/FeedingestFuzz, `make fuzz`) found, minimised, each with the property it broke.
@Suite struct FuzzRegressionTests {
    /// "\n\0\0\0" reads as UTF-32LE; the document's one stray byte at the end used to be decided differently when
    /// the bytes came in pieces.
    @Test func utf32WithATrailingPartialCharacterDoesNotDependOnChunking() {
        let bytes: [UInt8] = [0x0A, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xA6]
        let whole = ChunkingOutcome.parse(bytes, split: .whole, configuration: .init())
        for offsets in [[3, 3, 6], [1], [4], [5], [8], [4, 8]] {
            let split = ChunkingOutcome.parse(bytes, split: .offsets(offsets), configuration: .init())
            #expect(split == whole, "\(offsets): \(whole.firstDifference(from: split)) — \(whole.errorPosition ?? "ok") vs \(split.errorPosition ?? "ok")")
        }
    }
}

extension FuzzRegressionTests {
    /// A NUL byte anywhere (prolog, text, attribute, tag, after the root) is one error, at one place, however the bytes
    /// are split, byte by byte included.
    @Test(arguments: ["\n\0<a/>", "<a>x\0y</a>", "<a b='\0'/>", "<a\0/>", "<a/>\0", "<?xml version='1.0'?>\n<r>\n<i>t\0</i></r>",
                      "<r><![CDATA[\0]]></r>", "<!--\0--><r/>"])
    func nulBytesAreOneErrorWhateverTheSplit(document: String) {
        let bytes = Array(document.utf8)
        for configuration in [ExpatXMLConfiguration(), { var c = ExpatXMLConfiguration(); c.processesNamespaces = false; return c }()] {
            let whole = ChunkingOutcome.parse(bytes, split: .whole, configuration: configuration)
            #expect(whole.error?.code == .invalidToken, "\(whole.errorPosition ?? "no error")")
            for split in [ChunkingSplit.byteByByte, .random(seed: 7)] {
                let outcome = ChunkingOutcome.parse(bytes, split: split, configuration: configuration)
                #expect(outcome == whole, "\(split): \(whole.firstDifference(from: outcome)); \(whole.errorPosition ?? "ok") vs \(outcome.errorPosition ?? "ok")")
            }
        }
    }
}

extension FuzzRegressionTests {
    /// UTF-32LE "<", U+0000, then a sequence iconv refuses: the refused sequence stands after the error, so it is not
    /// counted as a replacement whether the transcoder got to it (one chunk) or not (cut at 8). Found in a GB2312 feed
    /// of the real-world corpus and minimised by libFuzzer.
    @Test func replacementsAfterTheErrorAreNotCountedWhateverTheSplit() {
        let bytes: [UInt8] = [0x3C, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0x3E, 0x0A, 0x0A]
        let whole = ChunkingOutcome.parse(bytes, split: .whole, configuration: .init())
        #expect(whole.error?.code == .invalidToken)
        #expect(whole.parserState.contains("replacements 0"), "\(whole.parserState)")
        for split in [ChunkingSplit.offsets([8]), .offsets([4]), .byteByByte] {
            let outcome = ChunkingOutcome.parse(bytes, split: split, configuration: .init())
            #expect(outcome == whole, "\(split): \(outcome.parserState) vs \(whole.parserState)")
        }
    }

    /// The same rule in a single-byte document transcoded from GB2312: a refused byte before the error is counted the
    /// same whatever the split.
    @Test func gb2312ReplacementsBeforeAnErrorCountTheSameWhateverTheSplit() {
        var bytes = Array(#"<?xml version="1.0" encoding="gb2312"?><r>"#.utf8)
        bytes += [0xCD, 0xB6, 0xFF, 0xFF, 0xC6, 0xAC]  // valid, two invalid bytes, valid
        bytes += Array("</x>".utf8)                     // a mismatched tag after them
        let whole = ChunkingOutcome.parse(bytes, split: .whole, configuration: .init())
        #expect(whole.error?.code == .tagMismatch)
        #expect(whole.parserState.contains("replacements 2"), "\(whole.parserState)")
        for split in [ChunkingSplit.byteByByte, .random(seed: 3)] {
            let outcome = ChunkingOutcome.parse(bytes, split: split, configuration: .init())
            #expect(outcome == whole, "\(split): \(whole.firstDifference(from: outcome)) \(outcome.parserState) vs \(whole.parserState)")
        }
    }
}
