// HTMLSanitizer: the allow-lists and the URL rule, applied to the events of a fragment parsed by libxml2's HTML parser
// (LibXML2.swift), and the serialisation of what is kept.

/// Cleans an HTML fragment to an allow-list of elements, attributes and URL schemes, so that a page can show it.
///
/// ```swift
/// let safe = HTMLSanitizer().sanitize(#"<p onclick="x()">Hi <script>evil()</script><a href="javascript:x()">there</a></p>"#)
/// // <p>Hi <a>there</a></p>
/// ```
///
/// The fragment is read by libxml2's HTML parser (which recovers from any tag soup, as a browser does), and written
/// out again from the tree, so what comes out is well formed and means the same to every browser:
///
/// - Elements in ``removedElements`` (`script`, `style`, `iframe`, `object`, `embed`, `svg`, `math`, `template`, form
///   controls' `form` …) are removed with everything inside them.
/// - Other elements outside ``allowedElements`` are unwrapped: the tag goes, its content stays.
/// - Attributes outside ``allowedAttributes`` are removed; so are every event handler (`on…`) and `style`, whatever the
///   allow-list says.
/// - URL attributes (`href`, `src`, `cite`, `longdesc`, `poster`, `usemap`, `background`) keep only URLs whose scheme
///   is in ``allowedURLSchemes`` or that have none (relative URLs are left as they are, for the feed's resolver). The
///   scheme is read the way a browser reads it: after removing tabs and newlines anywhere and control characters and
///   spaces around it, and after libxml2 has decoded character references (`jav&#x09;ascript:` is `javascript:`).
///   `data:` URLs are kept only as the `src` of an `img` with a raster image type (PNG, GIF, JPEG, WebP, AVIF, BMP,
///   ICO), and only when ``allowsDataImages`` is on: an inline picture cannot run code, but `data:image/svg+xml` can,
///   and any other `data:` URL (`data:text/html`) is a page of its own.
/// - Comments, processing instructions and doctypes are removed. Text and attribute values are escaped again
///   (`&`, `<`, `>` and `"`), so what libxml2 decoded is exactly what a browser will see.
///
/// Input without `<` or `&` is returned unchanged: there is nothing to clean. The allow-lists start from feedparser's
/// documented acceptable elements and attributes, without form controls (`form`, `input`, `button`, `select`,
/// `textarea`, …), which a feed has no business showing, and without attributes that fetch or track (`ping`,
/// `dynsrc`, `lowsrc`, `srcset`, `action`).
public struct HTMLSanitizer: Sendable, Hashable {
    /// Elements kept (with allowed attributes). Others are unwrapped, or removed with their content when they are in
    /// ``removedElements``, which wins.
    public var allowedElements: Set<String> = HTMLSanitizer.defaultElements
    /// Attributes kept on allowed elements (lower case). `style` and `on…` handlers are removed even when listed here.
    public var allowedAttributes: Set<String> = HTMLSanitizer.defaultAttributes
    /// URL schemes kept in URL attributes (lower case, without the colon). Relative URLs are always kept.
    public var allowedURLSchemes: Set<String> = HTMLSanitizer.defaultSchemes
    /// Whether `<img src="data:image/png;base64,…">` (and the other raster image types) is kept. Default `true`.
    public var allowsDataImages = true

    /// Creates a sanitiser with the default allow-lists.
    public init() {}

    /// Elements removed with everything inside them, whatever ``allowedElements`` says: code, styles, embedded
    /// documents and plugins, foreign content (SVG and MathML carry their own scripts and event handlers), the
    /// document's head, and forms.
    public static let removedElements: Set<String> = [
        "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "param", "noembed", "noframes",
        "template", "svg", "math", "head", "title", "meta", "link", "base", "basefont", "bgsound", "form", "input",
        "button", "select", "textarea", "keygen", "datalist", "output", "portal", "xml",
    ]

    /// The default ``allowedElements``: feedparser's acceptable elements without form controls, plus a few of
    /// HTML5's text elements (`mark`, `wbr`, `picture`, `ruby`, `bdi`, …).
    public static let defaultElements: Set<String> = [
        "a", "abbr", "acronym", "address", "area", "article", "aside", "audio", "b", "bdi", "bdo", "big", "blockquote",
        "br", "caption", "center", "cite", "code", "col", "colgroup", "data", "dd", "del", "details", "dfn", "dir",
        "div", "dl", "dt", "em", "fieldset", "figcaption", "figure", "font", "footer", "h1", "h2", "h3", "h4", "h5",
        "h6", "header", "hgroup", "hr", "i", "img", "ins", "kbd", "label", "legend", "li", "main", "map", "mark", "menu",
        "meter", "nav", "ol", "p", "picture", "pre", "progress", "q", "rp", "rt", "ruby", "s", "samp", "section",
        "small", "source", "span", "strike", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th",
        "thead", "time", "tr", "track", "tt", "u", "ul", "var", "video", "wbr",
    ]

    /// The default ``allowedAttributes``: feedparser's acceptable attributes without those of forms, scripting and
    /// fetching (`action`, `ping`, `dynsrc`, `lowsrc`, `contenteditable`, `accesskey`, …).
    public static let defaultAttributes: Set<String> = [
        "abbr", "align", "alt", "axis", "background", "bgcolor", "border", "cellpadding", "cellspacing", "char", "charoff",
        "cite", "class", "clear", "color", "cols", "colspan", "compact", "controls", "coords", "datetime", "dir", "face",
        "headers", "height", "high", "href", "hreflang", "hspace", "id", "kind", "label", "lang", "longdesc", "loop", "low",
        "max", "min", "muted", "name", "nohref", "noshade", "nowrap", "open", "optimum", "poster", "preload", "rel",
        "rev", "reversed", "rows", "rowspan", "rules", "scope", "shape", "size", "span", "src", "srclang", "start",
        "summary", "target", "title", "type", "usemap", "valign", "value", "vspace", "width", "xml:lang",
    ]

    /// The default ``allowedURLSchemes``.
    public static let defaultSchemes: Set<String> = [
        "http", "https", "mailto", "ftp", "ftps", "tel", "sms", "news", "nntp", "irc", "ircs", "magnet", "feed", "xmpp",
        "geo", "urn", "sip", "sips", "webcal", "gopher",
    ]

    /// Attributes whose value is a URL.
    static let urlAttributes: Set<String> = ["href", "src", "cite", "longdesc", "poster", "usemap", "background"]

    /// Elements with no end tag.
    static let voidElements: Set<String> = ["area", "br", "col", "hr", "img", "source", "track", "wbr"]

    /// The raster image types a `data:` URL of an `img` may have.
    static let dataImageTypes: Set<String> = [
        "image/png", "image/gif", "image/jpeg", "image/jpg", "image/pjpeg", "image/webp", "image/avif", "image/bmp",
        "image/x-icon", "image/vnd.microsoft.icon",
    ]

    /// The fragment cleaned to the allow-lists. When libxml2 cannot build a tree (it is out of memory), every
    /// character of markup is escaped instead, so nothing unsafe passes either way.
    public func sanitize(_ html: String) -> String {
        guard html.utf8.contains(where: { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "&") }) else { return html }
        guard let tree = HTMLTree(fragment: html) else { return Self.escaped(html, quotes: false) }
        var output = ""
        output.reserveCapacity(html.utf8.count)
        // Elements opened and written (true) or unwrapped (false), so each end knows whether to write a tag.
        var written: [Bool] = []
        tree.walk { event in
            switch event {
            case .start(let name, let attributes):
                if Self.removedElements.contains(name) { written.append(false); return false }
                guard allowedElements.contains(name) else { written.append(false); return true }
                written.append(true)
                output += "<" + name
                for (attribute, value) in attributes where keeps(attribute, value: value, on: name) {
                    output += " " + attribute + "=\"" + Self.escaped(value, quotes: true) + "\""
                }
                output += ">"
                return true
            case .end(let name):
                if written.popLast() == true, !Self.voidElements.contains(name) { output += "</" + name + ">" }
                return true
            case .text(let text):
                output += Self.escaped(text, quotes: false)
                return true
            }
        }
        return output
    }

    /// Whether an attribute stays on an element.
    func keeps(_ attribute: String, value: String, on element: String) -> Bool {
        guard allowedAttributes.contains(attribute), !attribute.hasPrefix("on"), attribute != "style" else { return false }
        guard Self.urlAttributes.contains(attribute) else { return true }
        switch Self.scheme(of: value) {
        case .relative:
            return true
        case .scheme(let scheme):
            if scheme == "data" { return allowsDataImages && element == "img" && attribute == "src" && Self.isDataImage(value) }
            return allowedURLSchemes.contains(scheme)
        case .unreadable:
            return false
        }
    }

    /// What a URL's scheme is, read as a browser reads it.
    enum Scheme: Equatable {
        /// No scheme: a relative reference (`/a`, `b.html`, `//host/c`, `#d`, `?e`).
        case relative
        /// A scheme, lower-cased.
        case scheme(String)
        /// A colon before the first `/`, `?` or `#` that does not end a valid scheme (`java script:`): refused.
        case unreadable
    }

    /// The scheme of a URL after the WHATWG URL parser's clean-up: C0 controls and spaces trimmed from both ends, ASCII
    /// tabs and newlines removed everywhere.
    static func scheme(of url: String) -> Scheme {
        var bytes = Array(url.utf8)
        while let first = bytes.first, first <= 0x20 { bytes.removeFirst() }
        bytes.removeAll { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ":") {
                guard index > 0 else { return .unreadable }
                let candidate = bytes[..<index]
                let valid = candidate.first.map(isASCIILetter) == true
                    && candidate.allSatisfy { isASCIILetter($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
                return valid ? .scheme(String(decoding: candidate, as: UTF8.self).lowercased()) : .unreadable
            }
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { return .relative }
            index += 1
        }
        return .relative
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }

    /// Whether a `data:` URL's media type is a raster image type (`data:image/png;base64,…`).
    static func isDataImage(_ url: String) -> Bool {
        let cleaned = String(decoding: url.utf8.filter { $0 > 0x20 }, as: UTF8.self).lowercased()
        guard cleaned.hasPrefix("data:") else { return false }
        let type = cleaned.dropFirst(5).prefix { $0 != ";" && $0 != "," }
        return dataImageTypes.contains(String(type))
    }

    /// Text with `&`, `<`, `>` (and `"` in attribute values) as character references.
    static func escaped(_ text: String, quotes: Bool) -> String {
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || (quotes && $0 == 0x22) }) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"" where quotes: result += "&quot;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
