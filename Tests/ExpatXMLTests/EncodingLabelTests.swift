@testable import ExpatXML
import Testing

/// Encoding labels (from a declaration, an HTTP charset or `--charset`) are looked up with XML white space (space, tab, CR, LF) trimmed.
@Suite("Encoding labels")
struct EncodingLabelTests {
    @Test func labelsAreTrimmedOfXMLWhiteSpaceByteByByte() {
        #expect(EncodingLabel.resolve(" UTF-8\t")?.canonicalName == "UTF-8")
        #expect(EncodingLabel.resolve("\n windows-1251 \r")?.canonicalName == "windows-1251")
        // A carriage return and line feed together: one Character, which the old Character-wise trim did not match.
        #expect(EncodingLabel.resolve("windows-1251\r\n")?.canonicalName == "windows-1251")
        #expect(EncodingLabel.resolve("  \t ") == nil)
        #expect(EncodingLabel.resolve("no-such-charset") == nil)
        #expect(" \u{A0}x\u{A0} ".trimmingXMLWhitespace() == "\u{A0}x\u{A0}")  // only XML white space goes
        #expect("".trimmingXMLWhitespace() == "")
    }
}
