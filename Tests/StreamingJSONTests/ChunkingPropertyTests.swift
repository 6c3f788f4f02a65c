import Foundation
import StreamingJSON
import TestSupport
import Testing

/// The events of a document never depend on how its bytes were split: whole, one byte at a time, and random splits
/// (SplitMix64, seeded, so a failure repeats), over hand-written edge cases and every JSON file of the corpora.
@Suite("JSON chunking property")
struct ChunkingPropertyTests {
    static let documents: [(name: String, bytes: [UInt8])] = [
        ("escapes at every position", Array(#"{"a\"b":"\\\"\\\\\"","\u0041\u00e9\ud83d\ude00":"x\/y\b\f\n\r\t","":""}"#.utf8)),
        ("backslash runs", Array(#"["\\","\\\\","\\\"","a\\\\\\\"b\\"]"#.utf8)),
        ("numbers cut anywhere", Array("[0,-0,1.25,-3e+10,6.02E23,123456789012345678901234567890,1e-400]".utf8)),
        ("literals", Array("[true,false,null,[],{},[[]],{\"a\":{}}]".utf8)),
        ("white space", Array(" \n\t{ \"a\" :\r\n [ 1 , 2 ] } \n".utf8)),
        ("multi-byte text", Array(#"{"Zürich":"東京 — São Paulo 😀","Ελλάδα":["Москва"]}"#.utf8)),
        ("byte-order mark", [0xEF, 0xBB, 0xBF] + Array(#"{"a":[1]}"#.utf8)),
        ("a syntax error late", Array(#"{"a":[1,2,3],"b":"c","d":[tru]}"#.utf8)),
        ("truncated in a string", Array(#"{"a":"unterminated"#.utf8)),
        ("a control character", Array("[\"a\tb\"]".utf8)),
    ]

    static func corpusFiles() -> [URL] {
        let roots = [Paths.realworld, Paths.gofeed.appendingPathComponent("testdata")]
        var files: [URL] = []
        for root in roots {
            guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walker where url.pathExtension == "json" {
                files.append(url)
            }
        }
        return files.sorted { $0.path < $1.path }
    }

    @Test func theCorpusHasJSONFiles() {
        #expect(Self.corpusFiles().count >= 20, "expected the JSON files of ../shared/corpus")
    }

    @Test("hand-written documents: one byte at a time and random splits", arguments: 0..<documents.count)
    func handWritten(index: Int) {
        let (name, bytes) = Self.documents[index]
        check(bytes, name: name, randomRounds: 50)
    }

    @Test func corpus() throws {
        for url in Self.corpusFiles() {
            let bytes = Array(try Data(contentsOf: url))
            check(bytes, name: url.lastPathComponent, randomRounds: bytes.count > 100_000 ? 2 : 6, byteByByte: bytes.count <= 200_000)
        }
    }

    private func check(_ bytes: [UInt8], name: String, randomRounds: Int, byteByByte: Bool = true) {
        let whole = record(bytes)
        if byteByByte {
            let single = record(bytes, chunk: 1)
            #expect(single.events == whole.events, "\(name): one byte at a time")
            #expect(single.error == whole.error, "\(name): one byte at a time")
        }
        var random = SplitMix64(seed: UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        for round in 0..<randomRounds {
            var splits: [Int] = []
            var offset = 0
            while true {
                offset += 1 + random.next(below: max(1, bytes.count / 8))
                if offset >= bytes.count { break }
                splits.append(offset)
            }
            let split = record(bytes, splits: splits)
            #expect(split.events == whole.events, "\(name): random splits, round \(round)")
            #expect(split.error == whole.error, "\(name): random splits, round \(round)")
        }
    }
}
