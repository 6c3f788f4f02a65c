import Foundation
import Syndication
import Testing

/// The article line's writer: a value over one growable allocation.
@Suite("JSONWriter")
struct JSONWriterTests {
    /// A copy shares the allocation until either side writes: then each keeps what it wrote.
    @Test func copiesAreIndependent() {
        var first = JSONWriter()
        first.beginArray()
        first.string("a")
        var second = first
        second.string("b")
        first.string("c")
        first.endArray()
        second.endArray()
        #expect(String(decoding: first.bytes, as: UTF8.self) == #"["a","c"]"#)
        #expect(String(decoding: second.bytes, as: UTF8.self) == #"["a","b"]"#)
    }

    /// Values far past the first allocation, with escapes everywhere (the worst case's room) and none: what Foundation
    /// reads back is what was written, and `withBytes` lends the same bytes as `bytes`.
    @Test func growsPastItsFirstAllocation() throws {
        let escaped = String(repeating: "\"\\\n\u{1}é", count: 3_000)  // six bytes out for most bytes in
        let plain = String(repeating: "plain text, ", count: 2_000)
        var json = JSONWriter()
        json.beginObject()
        json.field("escaped", escaped)
        json.field("plain", plain)
        json.field("count", 3)
        json.endObject()
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(json.bytes)) as? [String: Any])
        #expect(decoded["escaped"] as? String == escaped)
        #expect(decoded["plain"] as? String == plain)
        #expect(decoded["count"] as? Int == 3)
        #expect(json.withBytes { Array($0) } == json.bytes && json.count == json.bytes.count)
        json.reset()
        #expect(json.count == 0 && json.bytes.isEmpty)
    }
}
