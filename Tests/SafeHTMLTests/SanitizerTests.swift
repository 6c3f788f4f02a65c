import Foundation
import SafeHTML
import Testing

/// The known XSS vectors (in the style of OWASP's filter-evasion cheat sheet), each cleaned for real by libxml2's HTML
/// parser and the allow-list.
@Suite struct XSSVectorTests {
    let sanitizer = HTMLSanitizer()

    /// What must never survive sanitising: an element that runs code or loads an active document, an event handler or
    /// style attribute, or a URL attribute with a script or document scheme. Attribute values are taken out first (the
    /// sanitiser escapes `"` in them), so a value holding `<script>` as escaped text does not count; they are checked
    /// on their own.
    static func assertInert(_ html: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var markup = ""
        var values: [String] = []
        var rest = Substring(html)
        while let open = rest.range(of: "=\"") {
            markup += rest[..<open.lowerBound] + "="
            let after = rest[open.upperBound...]
            let close = after.firstIndex(of: "\"") ?? after.endIndex
            values.append(String(after[..<close]).lowercased())
            rest = close < after.endIndex ? after[after.index(after: close)...] : ""
        }
        markup += rest
        let lower = markup.lowercased()
        for needle in ["<script", "<style", "<iframe", "<object", "<embed", "<svg", "<math", "<meta", "<link", "<base",
                       "<form", "<input", "<frame", " on", " style="] {
            #expect(!lower.contains(needle), "\(needle) survived in \(html)", sourceLocation: sourceLocation)
        }
        for value in values {
            let squeezed = value.filter { !$0.isWhitespace && !($0.asciiValue.map { $0 < 0x20 } ?? false) }
            for scheme in ["javascript:", "vbscript:", "data:text", "data:image/svg"] {
                #expect(!squeezed.hasPrefix(scheme), "\(scheme) survived in \(html)", sourceLocation: sourceLocation)
            }
        }
    }

    static let vectors: [String] = [
        #"<SCRIPT SRC=http://127.0.0.1/xss.js></SCRIPT>"#,
        #"<IMG SRC="javascript:alert('XSS');">"#,
        #"<IMG SRC=javascript:alert('XSS')>"#,
        #"<IMG SRC=JaVaScRiPt:alert('XSS')>"#,
        #"<IMG SRC=`javascript:alert("RSnake says, 'XSS'")`>"#,
        #"<a onmouseover="alert(document.cookie)">xxs link</a>"#,
        #"<a onmouseover=alert(document.cookie)>xxs link</a>"#,
        #"<IMG """><SCRIPT>alert("XSS")</SCRIPT>"\>"#,
        #"<IMG SRC=javascript:alert(String.fromCharCode(88,83,83))>"#,
        #"<IMG SRC=# onmouseover="alert('xxs')">"#,
        #"<IMG SRC= onmouseover="alert('xxs')">"#,
        #"<IMG onmouseover="alert('xxs')">"#,
        #"<IMG SRC=/ onerror="alert(String.fromCharCode(88,83,83))"></img>"#,
        #"<img src=x onerror="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041">"#,
        #"<IMG SRC=&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;&#97;&#108;&#101;&#114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;>"#,
        #"<IMG SRC=&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041>"#,
        #"<IMG SRC=&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72&#x74&#x28&#x27&#x58&#x53&#x53&#x27&#x29>"#,
        "<IMG SRC=\"jav\tascript:alert('XSS');\">",
        #"<IMG SRC="jav&#x09;ascript:alert('XSS');">"#,
        #"<IMG SRC="jav&#x0A;ascript:alert('XSS');">"#,
        #"<IMG SRC="jav&#x0D;ascript:alert('XSS');">"#,
        "<IMG SRC=\"jav\u{0}ascript:alert('XSS');\">",
        #"<IMG SRC=" &#14;  javascript:alert('XSS');">"#,
        #"<SCRIPT/XSS SRC="http://127.0.0.1/xss.js"></SCRIPT>"#,
        #"<BODY onload!#$%&()*~+-_.,:;?@[/|\]^`=alert("XSS")>"#,
        #"<<SCRIPT>alert("XSS");//\<</SCRIPT>"#,
        #"<SCRIPT SRC=http://127.0.0.1/xss.js?< B >"#,
        #"<SCRIPT SRC=//127.0.0.1/.j>"#,
        #"<IMG SRC="`<javascript:alert>`('XSS')""#,
        #"<iframe src=http://127.0.0.1/scriptlet.html <"#,
        #"\";alert('XSS');//"#,
        #"</TITLE><SCRIPT>alert("XSS");</SCRIPT>"#,
        #"<INPUT TYPE="IMAGE" SRC="javascript:alert('XSS');">"#,
        #"<BODY BACKGROUND="javascript:alert('XSS')">"#,
        #"<IMG DYNSRC="javascript:alert('XSS')">"#,
        #"<IMG LOWSRC="javascript:alert('XSS')">"#,
        #"<STYLE>li {list-style-image: url("javascript:alert('XSS')");}</STYLE><UL><LI>XSS</br>"#,
        #"<IMG SRC='vbscript:msgbox("XSS")'>"#,
        #"<svg/onload=alert('XSS')>"#,
        #"<svg onload=alert(1)><circle r=5/></svg>"#,
        #"<img src=x onerror=alert(1)>"#,
        #"<a href="jav&#x09;ascript:alert(1)">x</a>"#,
        #"<a href="&#x6A;avascript&#x3A;alert(1)">x</a>"#,
        #"<a href="  javascript:alert(1)">x</a>"#,
        #"<a href="JAVASCRIPT:alert(1)">x</a>"#,
        #"<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>"#,
        #"<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">"#,
        #"<LINK REL="stylesheet" HREF="javascript:alert('XSS');">"#,
        #"<META HTTP-EQUIV="refresh" CONTENT="0;url=javascript:alert('XSS');">"#,
        #"<IFRAME SRC="javascript:alert('XSS');"></IFRAME>"#,
        #"<FRAMESET><FRAME SRC="javascript:alert('XSS');"></FRAMESET>"#,
        #"<TABLE BACKGROUND="javascript:alert('XSS')">"#,
        #"<TABLE><TD BACKGROUND="javascript:alert('XSS')">"#,
        #"<DIV STYLE="background-image: url(javascript:alert('XSS'))">"#,
        #"<DIV STYLE="width: expression(alert('XSS'));">"#,
        #"<IMG STYLE="xss:expr/*XSS*/ession(alert('XSS'))">"#,
        #"<STYLE TYPE="text/javascript">alert('XSS');</STYLE>"#,
        #"<BASE HREF="javascript:alert('XSS');//">"#,
        #"<OBJECT TYPE="text/x-scriptlet" DATA="http://127.0.0.1/scriptlet.html"></OBJECT>"#,
        #"<EMBED SRC="data:image/svg+xml;base64,PHN2ZyB4bWxuczpzdmc9Imh0dH A6Ly93d3cudzMub3JnLzIwMDAvc3ZnIiB4bWxucz0iaHR0cDovL3d3dy53My5vcmcv">"#,
        #"<!--[if gte IE 4]><SCRIPT>alert('XSS');</SCRIPT><![endif]-->"#,
        #"<SCRIPT a=">" SRC="httx://127.0.0.1/xss.js"></SCRIPT>"#,
        #"<SCRIPT ="blah" SRC="httx://127.0.0.1/xss.js"></SCRIPT>"#,
        #"<A HREF="javascript:document.location='http://127.0.0.1/'">XSS</A>"#,
        #"<div><scr<script>ipt>alert(1)</scr</script>ipt></div>"#,
        #"<noscript><p title="</noscript><img src=x onerror=alert(1)>">"#,
        #"<a href="java&#0000115;cript:alert(1)">x</a>"#,
        #"<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>"#,
        #"<details open ontoggle=alert(1)>"#,
        #"<video><source onerror="alert(1)"></video>"#,
        #"<a href="vbscript:msgbox(1)">x</a>"#,
        #"<form action="javascript:alert(1)"><button>go</button></form>"#,
        "<img src=\"x\" onerror\u{0C}=alert(1)>",
        #"<img/src="x"/onerror=alert(1)>"#,
        #"<a href="javascript&colon;alert(1)">x</a>"#,
        #"<p style="x:expression(alert(1))">y</p>"#,
    ]

    @Test func knownVectorsComeOutInert() {
        for vector in Self.vectors {
            let cleaned = sanitizer.sanitize(vector)
            Self.assertInert(cleaned)
            // Cleaning is idempotent: what came out cleans to itself.
            #expect(sanitizer.sanitize(cleaned) == cleaned, "not idempotent: \(vector)")
        }
    }

    @Test func eventHandlerOnImageGoesButTheImageStays() {
        #expect(sanitizer.sanitize(#"<img src=x onerror=alert(1)>"#) == #"<img src="x">"#)
        #expect(sanitizer.sanitize(#"<IMG SRC="/a.png" onmouseover="alert('xxs')" alt=hi>"#) == #"<img src="/a.png" alt="hi">"#)
    }

    @Test func javascriptURLsAreDroppedButTheLinkTextStays() {
        #expect(sanitizer.sanitize(#"<a href="jav&#x09;ascript:alert(1)">click</a>"#) == "<a>click</a>")
        #expect(sanitizer.sanitize(#"<a href="&#x6A;avascript&#x3A;alert(1)">x</a>"#) == "<a>x</a>")
        #expect(sanitizer.sanitize(#"<a href=" JaVaScRiPt:alert(1)">x</a>"#) == "<a>x</a>")
        #expect(sanitizer.sanitize(#"<a href="java script:alert(1)">x</a>"#) == "<a>x</a>")
    }

    @Test func scriptStyleIframeObjectAreRemovedWithTheirContent() {
        #expect(sanitizer.sanitize("<p>a<script>alert(1)</script>b</p>") == "<p>ab</p>")
        #expect(sanitizer.sanitize("<p>a<style>p{color:red}</style>b</p>") == "<p>ab</p>")
        #expect(sanitizer.sanitize(#"<p>a<iframe src="http://127.0.0.1/">inside</iframe>b</p>"#) == "<p>ab</p>")
        #expect(sanitizer.sanitize(#"<p>a<object data="x.swf"><param name=a value=b>fallback</object>b</p>"#) == "<p>ab</p>")
        #expect(sanitizer.sanitize(#"<svg onload=alert(1)><text>t</text></svg>after"#) == "after")
    }

    @Test func unknownElementsAreUnwrapped() {
        #expect(sanitizer.sanitize("<blink>hi <b>there</b></blink>") == "hi <b>there</b>")
        #expect(sanitizer.sanitize("<custom-tag x=1>text</custom-tag>") == "text")
    }

    @Test func styleAndUnknownAttributesGo() {
        #expect(sanitizer.sanitize(#"<p style="color:red" class="c" data-x="1" id="i">t</p>"#) == #"<p class="c" id="i">t</p>"#)
        #expect(sanitizer.sanitize(#"<DIV STYLE="width: expression(alert('XSS'));">x</DIV>"#) == "<div>x</div>")
    }

    @Test func safeMarkupSurvivesUnchangedInMeaning() {
        let html = #"<p>Hello <a href="https://127.0.0.1/a?b=1&amp;c=2" title="t">world</a><br><img src="/i.png" alt="x" width="10"></p>"#
        #expect(sanitizer.sanitize(html) == html)
        #expect(sanitizer.sanitize(#"<a href="mailto:a@127.0.0.1">m</a>"#) == #"<a href="mailto:a@127.0.0.1">m</a>"#)
        #expect(sanitizer.sanitize(#"<a href="../rel/x.html#f">r</a>"#) == #"<a href="../rel/x.html#f">r</a>"#)
        #expect(sanitizer.sanitize("<table><tr><td colspan=2>c</td></tr></table>")
                == #"<table><tbody><tr><td colspan="2">c</td></tr></tbody></table>"# || sanitizer.sanitize("<table><tr><td colspan=2>c</td></tr></table>")
                == #"<table><tr><td colspan="2">c</td></tr></table>"#)
    }

    @Test func textIsEscapedAgain() {
        #expect(sanitizer.sanitize("a &lt;script&gt; b") == "a &lt;script&gt; b")
        #expect(sanitizer.sanitize("AT&amp;T <b>x</b>") == "AT&amp;T <b>x</b>")
        #expect(sanitizer.sanitize("no markup at all > here") == "no markup at all > here")
    }

    @Test func unclosedMarkupIsClosed() {
        #expect(sanitizer.sanitize("<b>bold <i>both") == "<b>bold <i>both</i></b>")
        #expect(sanitizer.sanitize(#"<a href="http://127.0.0.1/x>unclosed"#).contains("<a") == false
                || sanitizer.sanitize(#"<a href="http://127.0.0.1/x>unclosed"#).hasSuffix("</a>"))
    }

    @Test func dataImagesFollowThePolicy() {
        let png = #"<img src="data:image/png;base64,iVBORw0KGgo=">"#
        #expect(sanitizer.sanitize(png) == png)
        #expect(sanitizer.sanitize(#"<img src="data:image/svg+xml;base64,PHN2Zz4=">"#) == "<img>")
        #expect(sanitizer.sanitize(#"<a href="data:image/png;base64,iVBORw0KGgo=">x</a>"#) == "<a>x</a>")
        var strict = HTMLSanitizer()
        strict.allowsDataImages = false
        #expect(strict.sanitize(png) == "<img>")
    }

    @Test func deepNestingNeedsNoStack() {
        let depth = 100_000
        let html = String(repeating: "<div>", count: depth) + "x" + String(repeating: "</div>", count: depth)
        let cleaned = sanitizer.sanitize(html)
        #expect(cleaned.contains("x"))
        #expect(cleaned.hasPrefix("<div>"))
    }

    @Test func nulBytesAndControlCharactersDoNotCrash() {
        let cleaned = sanitizer.sanitize("<p>a\u{0}b<img src=\"x\u{1}\" onerror=1></p>")
        Self.assertInert(cleaned)
    }

    @Test func allowListsAreConfigurable() {
        var custom = HTMLSanitizer()
        custom.allowedElements.remove("img")
        custom.allowedURLSchemes.remove("mailto")
        #expect(custom.sanitize(#"<p><img src="a.png">t<a href="mailto:x@127.0.0.1">m</a></p>"#) == "<p>t<a>m</a></p>")
        custom.allowedElements.insert("script")  // removal wins
        #expect(custom.sanitize("<script>x</script>y") == "y")
    }
}
