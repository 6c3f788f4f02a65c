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
