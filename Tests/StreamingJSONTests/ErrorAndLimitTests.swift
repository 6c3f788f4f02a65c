import Foundation
import StreamingJSON
import TestSupport
import Testing

@Suite("JSON errors and limits")
struct ErrorAndLimitTests {
    /// Every split must give the same error at the same place: whole, one byte at a time, and a few odd sizes.
    static func sameErrorForEverySplit(_ bytes: [UInt8], configuration: JSONConfiguration = .init(),
                                       sourceLocation: SourceLocation = #_sourceLocation) -> JSONError? {
        let whole = record(bytes, configuration: configuration)
        for chunk in [1, 2, 3, 7, 64] {
            let split = record(bytes, chunk: chunk, configuration: configuration)
            #expect(split.error == whole.error, "chunk \(chunk)", sourceLocation: sourceLocation)
            #expect(split.events == whole.events, "chunk \(chunk)", sourceLocation: sourceLocation)
        }
        return whole.error
    }

    @Test func truncatedDocumentsFailAtTheirEnd() {
        for text in [#"{"a":"xy"#, #"{"a":[1,2"#, #"{"a""#, "{", "[", #""abc"#, "tru", "[1."] {
            let bytes = Array(text.utf8)
            let error = Self.sameErrorForEverySplit(bytes)
            #expect(error?.code == .truncated, "\(text): \(String(describing: error))")
            #expect(error?.byteOffset == Int64(bytes.count), "\(text): the end of the input")
        }
        // yajl's message is kept: premature EOF inside a value, its lexer's complaint inside a token.
        #expect(record(Array(#"{"a":[1,2"#.utf8)).error?.message == "parse error: premature EOF")
        #expect(record(Array("tru".utf8)).error?.message == "lexical error: invalid string in json text.")
    }

    @Test func anEmptyDocumentSaysSo() {
        for text in ["", "  \n\t "] {
            let error = Self.sameErrorForEverySplit(Array(text.utf8))
            #expect(error?.code == .empty, "\(String(describing: error))")
            #expect(error?.message == "no JSON value: the document is empty")
        }
    }

    @Test func syntaxErrorsCarryYajlsMessageOffsetLineAndColumn() {
        let bytes = Array("{\n  \"a\": 1,\n  \"b\": tru e\n}".utf8)
        let error = Self.sameErrorForEverySplit(bytes)
        #expect(error?.code == .syntax)
        #expect(error?.message == "lexical error: invalid string in json text.")
        // yajl's lexer stops after `tru`, at the space.
        #expect(error?.line == 3)
        #expect(error?.column == 10, "\(String(describing: error))")
        #expect(error?.byteOffset == 22)
        #expect(error?.source == "test.json")
        #expect(error?.description == "test.json:3:10: lexical error: invalid string in json text.")
        // A grammar error is reported at the offending token's start (a string's: two bytes in, as yajl counts), even
        // when a chunk boundary cuts the token.
        #expect(Self.sameErrorForEverySplit(Array(#"{"a":1 "bcdefgh"}"#.utf8))?.byteOffset == 9)
        #expect(Self.sameErrorForEverySplit(Array(#"{"a":1 2345678}"#.utf8))?.byteOffset == 7)
        #expect(Self.sameErrorForEverySplit(Array(#"[12 true]"#.utf8))?.byteOffset == 8, "yajl does not move back over a literal")

        for (text, code) in [(#"{"a":1}x"#, JSONError.Code.syntax), (#"{"a":01}"#, .syntax), (#"{"a":"\q"}"#, .syntax),
                             (#"{a:1}"#, .syntax), (#"[1,]"#, .syntax), ("{\"a\":\"x\ny\"}", .controlCharacter), ("// x\n{}", .syntax)] {
            let error = Self.sameErrorForEverySplit(Array(text.utf8))
            #expect(error?.code == code, "\(text): \(String(describing: error))")
            #expect((error?.byteOffset ?? -1) >= 0 && (error?.byteOffset ?? .max) <= Int64(text.utf8.count), "\(text)")
        }
    }

    @Test func invalidUTF8FailsWhenCheckedAndPassesWhenNot() {
        let bytes = Array(#"{"a":"x"#.utf8) + [0xC3, 0x28] + Array(#"y"}"#.utf8)
        let error = Self.sameErrorForEverySplit(bytes)
        #expect(error?.code == .invalidUTF8)
        #expect(error?.message == "lexical error: invalid bytes in UTF8 string.")

        var lenient = JSONConfiguration()
        lenient.validatesUTF8 = false
        final class Strings: JSONEventHandler {
            var decoded: [String] = []
            var valid: [Bool] = []
            func string(_ value: JSONBytes) {
                decoded.append(value.string)
                valid.append(value.validatedString != nil)
            }
        }
        let strings = Strings()
        #expect(throws: Never.self) { try JSONPushParser.parse(bytes, handler: strings, configuration: lenient) }
        #expect(strings.decoded == ["x\u{FFFD}(y"])
        #expect(strings.valid == [false])
    }

    @Test func nestingPastTheDepthLimitFails() {
        var configuration = JSONConfiguration()
        configuration.maximumDepth = 5
        let fine = Array(String(repeating: "[", count: 5).utf8) + Array(String(repeating: "]", count: 5).utf8)
        #expect(Self.sameErrorForEverySplit(fine, configuration: configuration) == nil)

        let deep = Array(String(repeating: "[{\"a\":", count: 3).utf8)
        let error = Self.sameErrorForEverySplit(deep, configuration: configuration)
        #expect(error?.code == .depthLimitExceeded)
        #expect(error?.byteOffset == 14, "the end of the sixth opening bracket: \(String(describing: error))")

        // The default limit holds against a hostile document: a million brackets fail fast, with bounded work.
        let hostile = [UInt8](repeating: 0x5B, count: 1_000_000)
        let result = record(hostile, chunk: 65536)
        #expect(result.error?.code == .depthLimitExceeded)
        #expect(result.error?.byteOffset == 513)
        #expect(result.events.count == 512)
    }

    @Test func aStringPastTheLimitFailsBeforeItIsBuffered() {
        var configuration = JSONConfiguration()
        configuration.maximumStringBytes = 10
        // Exactly at the limit is fine, escapes counted as written; keys count too.
        #expect(Self.sameErrorForEverySplit(Array(#"{"k":"0123456789","0123456789":"\"\\\"\\\""}"#.utf8), configuration: configuration) == nil)
        for text in [#"{"k":"0123456789A"}"#, #"{"0123456789AB":1}"#, #"["\"\"\"\"\"\""]"#] {
            let error = Self.sameErrorForEverySplit(Array(text.utf8), configuration: configuration)
            #expect(error?.code == .stringTooLarge, "\(text): \(String(describing: error))")
        }
        let error = Self.sameErrorForEverySplit(Array(#"{"k":"0123456789ABCDEF"}"#.utf8), configuration: configuration)
        #expect(error?.byteOffset == 16, "the first byte past the limit: \(String(describing: error))")
        // Numbers and literals have the same limit (yajl would buffer them as well).
        #expect(Self.sameErrorForEverySplit(Array("[1234567890]".utf8), configuration: configuration) == nil)
        let number = Self.sameErrorForEverySplit(Array("[12345678901]".utf8), configuration: configuration)
        #expect(number?.code == .stringTooLarge)
        #expect(number?.byteOffset == 11)
        #expect(number?.message == "a number or literal longer than the limit of 10 bytes")
        // An earlier syntax error wins over a later long string, however the bytes are split.
        let both = Self.sameErrorForEverySplit(Array(#"{"a":x,"k":"0123456789ABCDEF"}"#.utf8), configuration: configuration)
        #expect(both?.code == .syntax)
    }

    @Test func aHugeStringFailsWithoutHoldingIt() throws {
        // 64 MiB of string in 64 KiB chunks against the default 16 MiB limit: it fails where the limit is crossed.
        let recorder = EventRecorder()
        let parser = JSONPushParser(handler: recorder)
        try parser.parse(Array(#"{"content_html":""#.utf8))
        let chunk = [UInt8](repeating: 0x61, count: 65536)
        var failure: JSONError?
        for _ in 0..<1024 {
            do { try parser.parse(chunk) } catch { failure = error; break }
        }
        #expect(failure?.code == .stringTooLarge)
        #expect(failure?.byteOffset == Int64(17 + (16 << 20)))
        #expect(recorder.events == ["{", "key content_html"], "the key is delivered, the string never: \(recorder.events.prefix(3))")
    }

    @Test func theDocumentLimitHolds() {
        var configuration = JSONConfiguration()
        configuration.maximumDocumentBytes = 8
        #expect(Self.sameErrorForEverySplit(Array(#"{"a":12}"#.utf8), configuration: configuration) == nil)
        let error = Self.sameErrorForEverySplit(Array(#"{"a":123}"#.utf8), configuration: configuration)
        #expect(error?.code == .documentTooLarge)
        #expect(error?.byteOffset == 8)
    }

    @Test func codesHaveStableNames() {
        #expect(JSONError.Code.truncated.name == "truncated")
        #expect(JSONError.Code.stringTooLarge.name == "string-too-large")
        #expect(JSONError.Code(rawValue: 77).name == "json-77")
    }
}
