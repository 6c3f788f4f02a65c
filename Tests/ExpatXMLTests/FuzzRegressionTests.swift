import ExpatXML
import Foundation
import TestSupport
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
    /// UTF-32LE "<", U+0000, then a sequence iconv refuses (found in a GB2312 feed of the real-world corpus, minimised by
    /// libFuzzer): the events and the error are the same whatever the split. How many replacements were counted by
    /// then is not part of the property for a failed document: the transcoder hands expat a batch at a time, so it
    /// may have decoded past the error (feeding expat at every replacement instead made a document full of bad bytes
    /// quadratic: the fuzzer's next find, a 23 KB input that took 21 s).
    @Test func aRefusedSequenceAfterAnErrorDoesNotChangeTheErrorWhateverTheSplit() {
        let bytes: [UInt8] = [0x3C, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0x3E, 0x0A, 0x0A]
        let whole = ChunkingOutcome.parse(bytes, split: .whole, configuration: .init())
        #expect(whole.error?.code == .invalidToken)
        for split in [ChunkingSplit.offsets([8]), .offsets([4]), .byteByByte] {
            let outcome = ChunkingOutcome.parse(bytes, split: split, configuration: .init())
            #expect(outcome.events == whole.events && outcome.errorPosition == whole.errorPosition,
                    "\(split): \(outcome.errorPosition ?? "ok") vs \(whole.errorPosition ?? "ok")")
        }
    }

    /// A document that parses has the same replacement count whatever the split (GB2312 with two refused bytes).
    @Test func gb2312ReplacementsCountTheSameWhateverTheSplit() {
        var bytes = Array(#"<?xml version="1.0" encoding="gb2312"?><r>"#.utf8)
        bytes += [0xCD, 0xB6, 0xFF, 0xFF, 0xC6, 0xAC]  // valid, two invalid bytes, valid
        bytes += Array("</r>".utf8)
        let whole = ChunkingOutcome.parse(bytes, split: .whole, configuration: .init())
        #expect(whole.error == nil)
        #expect(whole.parserState.contains("replacements 2"), "\(whole.parserState)")
        for split in [ChunkingSplit.byteByByte, .random(seed: 3)] {
            let outcome = ChunkingOutcome.parse(bytes, split: split, configuration: .init())
            #expect(outcome == whole, "\(split): \(whole.firstDifference(from: outcome)) \(outcome.parserState) vs \(whole.parserState)")
        }
    }

    /// The shape of the fuzzer's slow input (a 23 KB real-world feed of the shared corpus behind a UTF-32LE "<\0\0\0",
    /// so a root start tag of thousands of refused sequences; it took 21 s): the repair filter kept the unfinished root
    /// tag for the next chunk and searched all of it again for its `>` with every chunk, and the transcoder handed on
    /// each replacement as a chunk of its own. Asserts the outcome, not the time; a regression shows as a run of minutes.
    @Test func manyRefusedSequencesWithRepairs() throws {
        var bytes: [UInt8] = [0x3C, 0x00, 0x00, 0x00]
        var generator = SplitMix64(seed: 17)
        for _ in 0..<6000 { bytes += [UInt8(truncatingIfNeeded: generator.next()), 0xFF, 0xFF, 0xFF] }  // not code points
        var configuration = ExpatXMLConfiguration()
        configuration.repairsMalformedInput = true
        let whole = ChunkingOutcome.parse(bytes, split: .whole, configuration: configuration)
        #expect(whole.error != nil)
        // Byte by byte is the worst case: before the fix every byte searched the whole kept root tag again.
        for split in [ChunkingSplit.random(seed: 5), .byteByByte] {
            let outcome = ChunkingOutcome.parse(bytes, split: split, configuration: configuration)
            #expect(outcome.events == whole.events && outcome.errorPosition == whole.errorPosition, "\(split)")
        }
    }
}

extension FuzzRegressionTests {
    /// Minimised from the fuzzer's find in an RSS 1.0 test feed: a root start tag `<\0df:RDF` whose NUL the repair
    /// filter removes. The filter then took `<channel>` for the root, declared `rdf` on it, and the real root's own
    /// `xmlns:rdf` event was hidden as if it were the filter's, in one chunk but not in two. Now every split reports it.
    @Test func aRootTagRepairedIntoShapeKeepsItsOwnDeclarations() {
        let document = "<!--c-->\n<\0df:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns=\"http://purl.org/rss/1.0/\">\n"
            + "<channel rdf:about=\"http://127.0.0.1/\"/>\n</rdf:RDF>\n"
        var configuration = ExpatXMLConfiguration()
        configuration.repairsMalformedInput = true
        let bytes = Array(document.utf8)
        let whole = ChunkingOutcome.parse(bytes, split: .whole, configuration: configuration)
        #expect(whole.events.contains("map rdf=http://www.w3.org/1999/02/22-rdf-syntax-ns#"))
        for split in [ChunkingSplit.byteByByte, .offsets([60]), .offsets([100])] {
            let outcome = ChunkingOutcome.parse(bytes, split: split, configuration: configuration)
            #expect(outcome == whole, "\(split): \(whole.firstDifference(from: outcome))")
        }
    }

    /// Found by the fuzzer and left as libexpat 2.5 does it (README, "Limits and security"): junk after the root whose
    /// first token is cut by a chunk boundary is "junk after document element" at its first byte, and "invalid token" a
    /// few bytes on when it arrives whole. Everything before the error is the same, and both name the junk.
    @Test func junkAfterTheRootIsOneOfTwoErrorsAndNothingElseDiffers() {
        let bytes = Array("<a/>\nsin-=\"x\"".utf8)
        let whole = ChunkingOutcome.parse(bytes, split: .whole, configuration: .init())
        let cut = ChunkingOutcome.parse(bytes, split: .offsets([6]), configuration: .init())
        #expect(whole.events == cut.events)
        #expect(whole.error?.code == .invalidToken)
        #expect(cut.error?.code == .junkAfterDocumentElement)
        #expect(whole.error.map { $0.byteOffset >= 5 } == true && cut.error?.byteOffset == 5)
    }
}
