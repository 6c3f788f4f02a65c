import Foundation
import StreamingJSON
import TestSupport
import Testing

@Suite("JSONPushParser")
struct JSONPushParserTests {
    @Test func deliversEveryKindOfEventInOrder() {
        let document = #"{"s":"a\"b\\c\n\u00e9\ud83d\ude00","n":[0,-12,3.5e-2,123456789012345678901234567890],"t":true,"f":false,"z":null,"o":{},"a":[]}"#
        let result = record(Array(document.utf8))
        #expect(result.error == nil)
        #expect(result.ended)
        #expect(result.events == [
            "{", "key s", "string a\"b\\c\né😀",
            "key n", "[", "number 0", "number -12", "number 3.5e-2", "number 123456789012345678901234567890", "]",
            "key t", "bool true", "key f", "bool false", "key z", "null", "key o", "{", "}", "key a", "[", "]", "}",
        ])
    }

    @Test func numbersKeepTheirTextAndConvertOnRequest() {
        final class Numbers: JSONEventHandler {
            var values: [(String, Int64?, Double?)] = []
            func number(_ text: JSONBytes) { values.append((text.string, text.int64, text.double)) }
        }
        let numbers = Numbers()
        #expect(throws: Never.self) { try JSONPushParser.parse(Array("[42,-7,9223372036854775807,9223372036854775808,1.5,1e3]".utf8), handler: numbers) }
        #expect(numbers.values.map(\.0) == ["42", "-7", "9223372036854775807", "9223372036854775808", "1.5", "1e3"])
        #expect(numbers.values.map(\.1) == [42, -7, .max, nil, nil, nil])
        #expect(numbers.values.map(\.2) == [42, -7, Double(Int64.max), 9_223_372_036_854_775_808.0, 1.5, 1000])
    }

    @Test func aByteOrderMarkIsSkippedAndCountedInOffsets() {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(#"{"a":1}"#.utf8)
        for chunk in [1, 2, 3, 100] {
            let result = record(bytes, chunk: chunk)
            #expect(result.error == nil, "chunk \(chunk)")
            #expect(result.events == ["{", "key a", "number 1", "}"])
        }
        // An error after it is reported at its offset in the input, the mark included: yajl stops after the `x`.
        let broken: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(#"{"a":x}"#.utf8)
        for chunk in [1, 2, 100] {
            #expect(record(broken, chunk: chunk).error?.byteOffset == 9, "chunk \(chunk)")
        }
        // Half a mark is not one.
        #expect(record([0xEF, 0xBB]).error?.code == .syntax)
    }

    @Test func aTopLevelScalarOrArrayIsJSONToo() {
        #expect(record(Array("7".utf8)).events == ["number 7"])
        #expect(record(Array(" [1, \"x\"] ".utf8)).events == ["[", "number 1", "string x", "]"])
    }

    @Test func duplicateKeysAreReportedAsTheyCome() {
        // JSON leaves duplicate names to the reader (RFC 8259, 4); the parser reports both, the feed reader decides.
        #expect(record(Array(#"{"a":1,"a":2}"#.utf8)).events == ["{", "key a", "number 1", "key a", "number 2", "}"])
    }

    @Test func oneShotAndFileEntryPoints() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("json-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("doc.json").path
        let document = Array(#"{"items":[{"id":1},{"id":"two"}],"title":"Zürich"}"#.utf8)
        try Data(document).write(to: URL(fileURLWithPath: path))

        let whole = EventRecorder()
        try JSONPushParser.parse(Data(document), handler: whole)
        let file = EventRecorder()
        try JSONPushParser(handler: file).parse(contentsOfFile: path, chunkSize: 3)
        #expect(file.events == whole.events)
        #expect(file.ended && whole.ended)

        let missing = JSONPushParser(handler: EventRecorder(), source: "missing")
        #expect(throws: JSONError.self) { try missing.parse(contentsOfFile: directory.appendingPathComponent("nope.json").path) }
        do {
            try missing.finish()
            Issue.record("finish after a read failure must throw")
        } catch {
            #expect(error.code == .readFailed)
        }
    }

    @Test func theHandlerCanAbort() {
        final class Stopper: JSONEventHandler {
            weak var parser: JSONPushParser?
            var strings = 0
            func string(_ value: JSONBytes) {
                strings += 1
                if value.equals("stop") { parser?.abortParsing() }
            }
        }
        let stopper = Stopper()
        let parser = JSONPushParser(handler: stopper)
        stopper.parser = parser
        do {
            try parser.parse(Array(#"["a","stop","b","c"]"#.utf8))
            Issue.record("the parse must throw once the handler aborts")
        } catch {
            #expect(error.code == .aborted)
            #expect(error.byteOffset == 11, "the end of the token that aborted: \(error)")
        }
        #expect(stopper.strings == 2, "no event after the abort")
        // The parser stays failed with the same error.
        #expect(throws: JSONError.self) { try parser.parse(Array("1".utf8)) }
        do { try parser.finish() } catch { #expect(error.code == .aborted) }
    }

    @Test func parsingAfterFinishFails() throws {
        let parser = JSONPushParser(handler: EventRecorder())
        try parser.parse(Array("{}".utf8))
        try parser.finish()
        try parser.finish()  // a second finish is harmless
        do {
            try parser.parse(Array(" ".utf8))
            Issue.record("parse after finish must throw")
        } catch {
            #expect(error.code == .finished)
        }
    }
}
