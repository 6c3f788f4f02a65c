import Foundation
@testable import Syndication
import Testing
import TestSupport

/// Relative links inside HTML: the `=`-to-`=` scan for `href=` and `src=` values against its byte-by-byte definition.
@Suite("URLResolver")
struct URLResolverTests {
    /// The definition the scan must agree with, byte by byte: a match starts at or after `index`, at least six bytes
    /// before the end, at the start of the bytes or after white space; the name in any case, then `=` and a quote.
    static func referenceAttributeValue(in bytes: [UInt8], from index: inout Int) -> Range<Int>? {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        while index + 5 < bytes.count {
            let isHref = bytes[index] | 0x20 == 0x68 && bytes[index + 1] | 0x20 == 0x72 && bytes[index + 2] | 0x20 == 0x65
                && bytes[index + 3] | 0x20 == 0x66 && bytes[index + 4] == 0x3D
            let isSrc = bytes[index] | 0x20 == 0x73 && bytes[index + 1] | 0x20 == 0x72 && bytes[index + 2] | 0x20 == 0x63
                && bytes[index + 3] == 0x3D
            if (isHref || isSrc) && (index == 0 || isSpace(bytes[index - 1])) {
                var cursor = index + (isHref ? 5 : 4)
                guard bytes[cursor] == 0x22 || bytes[cursor] == 0x27 else { index = cursor; continue }
                let quote = bytes[cursor]
                cursor += 1
                let start = cursor
                while cursor < bytes.count && bytes[cursor] != quote { cursor += 1 }
                index = cursor + 1
                return cursor < bytes.count ? start..<cursor : nil
            }
            index += 1
        }
        index = bytes.count
        return nil
    }

    /// Every match, in order, and where each scan left `index`.
    static func matches(_ bytes: [UInt8], _ scan: ([UInt8], inout Int) -> Range<Int>?) -> [String] {
        var found: [String] = []
        var index = 0
        while index < bytes.count {
            let match = scan(bytes, &index)
            found.append("\(match.map { "\($0)" } ?? "nil")@\(index)")
            if match == nil { break }
        }
        return found
    }

    @Test func theScanFindsWhatTheByteByByteDefinitionFinds() {
        // Pieces that make near misses likely: names in both cases, names glued to letters, unquoted and unclosed values,
        // `=` at the ends, values holding further names.
        let pieces = ["href=", "HREF=", "src=", "SrC=", "xhref=", "xsrc=", " ", "\n", "\t", "\"", "'", "=", "a", "<a ", ">",
                      "href", "ref=", "rc=", "/img.png", "&amp;", "é", "href=\"", "src='", "hre", "f="]
        var random = SplitMix64(seed: 18)
        var checked = 0
        for _ in 0..<20_000 {
            var text = ""
            for _ in 0..<Int(random.next() % 24) { text += pieces[Int(random.next() % UInt64(pieces.count))] }
            let bytes = Array(text.utf8)
            let expected = Self.matches(bytes, Self.referenceAttributeValue)
            let actual = Self.matches(bytes, URLResolver.attributeValue)
            #expect(actual == expected, "\(text.debugDescription)")
            if actual != expected { break }
            if expected.contains(where: { !$0.hasPrefix("nil") }) { checked += 1 }
        }
        // The inputs did exercise matches, not only misses.
        #expect(checked > 1_000)
    }

    @Test func relativeLinksInHTMLResolveAndTheRestIsUntouched() {
        var resolver = URLResolver()
        let html = ##"<p><a href="/a?x=1&amp;y=2">a</a> <img SRC='img/b.png'> <a href="https://other.example/c">c</a>"##
            + ##" <a href="#top">top</a> <a data-href="d">d</a> <a href=e>e</a>xsrc="f"</p>"##
        let resolved = resolver.resolveLinks(inHTML: html, against: "http://127.0.0.1/feeds/rss.xml")
        #expect(resolved == ##"<p><a href="http://127.0.0.1/a?x=1&amp;y=2">a</a> <img SRC='http://127.0.0.1/feeds/img/b.png'>"##
            + ##" <a href="https://other.example/c">c</a> <a href="#top">top</a> <a data-href="d">d</a> <a href=e>e</a>xsrc="f"</p>"##)
        #expect(resolver.resolveLinks(inHTML: "<p>no links at all = none</p>", against: "http://127.0.0.1/") == "<p>no links at all = none</p>")
        #expect(resolver.resolveLinks(inHTML: #"<a href="x">"#, against: nil) == #"<a href="x">"#)
    }

    /// The handler returns a URL as it is when `isAbsoluteAndTrimmed` says so, without `resolve`: that must be exactly
    /// when `resolve` would return it unchanged, against any base.
    @Test func anAbsoluteTrimmedURLIsWhatResolveReturnsUnchanged() {
        var resolver = URLResolver()
        let values = ["http://127.0.0.1/a", "https://x/y?z#w", "mailto:a@b", "data:,x", " http://127.0.0.1/a", "http://127.0.0.1/a\n",
                      "\thttp://x", "/relative", "relative", "", " ", "1http:x", "+a:b", "a:", ":x", "ht tp://x", "http:", "C:\\path"]
        for value in values {
            for base in [nil, "http://127.0.0.1/base/", "not a url"] as [String?] {
                if URLResolver.isAbsoluteAndTrimmed(value) {
                    #expect(resolver.resolve(value, against: base) == value, "\(value) against \(base ?? "nil")")
                }
            }
        }
        #expect(URLResolver.isAbsoluteAndTrimmed("http://127.0.0.1/a"))
        #expect(!URLResolver.isAbsoluteAndTrimmed(" http://127.0.0.1/a"))
        #expect(!URLResolver.isAbsoluteAndTrimmed("/relative"))
        #expect(!URLResolver.isAbsoluteAndTrimmed(""))
    }
}
