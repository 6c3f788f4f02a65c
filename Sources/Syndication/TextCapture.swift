// One field's text as it streams in: plain text decoded once, child markup re-serialised and escaped (with the
// namespace declarations embedded SVG and MathML need), Atom text constructs (text, html, xhtml, base64) read from
// their attributes and unwrapped at the end.

import ExpatXML
import Foundation

/// Text being collected for one field, with child markup re-serialised when the field has any.
struct TextCapture {
    private(set) var field: Field
    var bytes: [UInt8] = []
    /// The field's text while it is one plain text node, the commonest case, decoded once at once instead of
    /// copied into `bytes` and decoded later (a copy and an allocation less per field). Set only while `bytes` is
    /// empty; moved into `bytes` as soon as more comes.
    private var onlyText: String?
    /// The field is read as bytes (a ``TextContent``, an item's date: `Field.keepsBytes`): its text is collected in
    /// `bytes`, never as a `String`.
    private var keepsBytes = false
    /// `onlyText` starts and ends with something other than white space.
    private var onlyTextIsTrimmed = false
    /// Child elements appeared: `bytes` holds escaped markup, not plain text.
    var hasMarkup = false
    var kind: TextContent.Kind
    var isXHTML = false
    /// Atom 0.3 `mode="base64"`, or Atom 1.0 content of a binary media type: the text is base64.
    var isBase64 = false
    private(set) var base: String?
    /// Where each open child's start tag ends in `bytes`, to write `<br/>` for an empty child.
    var openChildren: [Int] = []
    /// What few captures need, out of line: a capture is made and dropped for every field, and an absent `Extras`
    /// costs one check there instead of a reference count per field.
    private var extras: Extras?

    private struct Extras {
        /// A category's scheme (RSS `domain`, Media RSS `scheme`) and label, kept from the start tag for the end.
        var scheme: String?, label: String?
        /// Namespaces the serialised markup declared, innermost last: the default namespace (empty prefix) or a
        /// prefix, bound at the child depth `depth`. Empty while everything is HTML, the common case.
        var declared: [(depth: Int, prefix: [UInt8], uri: [UInt8])] = []
    }

    /// A category's scheme (RSS `domain`, Media RSS `scheme`), kept from the start tag for the end.
    var scheme: String? { extras?.scheme }
    /// A category's label (Media RSS `label`), kept from the start tag for the end.
    var label: String? { extras?.label }

    /// Keeps a category's scheme and label from its start tag for its end.
    mutating func setCategoryAttributes(scheme: String?, label: String?) {
        updateExtras {
            $0.scheme = scheme
            $0.label = label
        }
    }
    private var declared: [(depth: Int, prefix: [UInt8], uri: [UInt8])] {
        get { extras?.declared ?? [] }
        set { updateExtras { $0.declared = newValue } }
    }

    private mutating func updateExtras(_ change: (inout Extras) -> Void) {
        var updated = extras ?? Extras()
        extras = nil
        change(&updated)
        extras = updated
    }

    init(field: Field, kind: TextContent.Kind, base: String?) {
        self.field = field
        self.kind = kind
        self.base = base
    }

    /// Starts over for another field, keeping the buffers' capacity.
    mutating func reset(field: Field, kind: TextContent.Kind, base: String?) {
        self.field = field
        self.kind = kind
        // Nearly always the base the last field had: comparing first (equal storage compares in a few instructions)
        // spares a retain and a release per field.
        if self.base != base { self.base = base }
        keepsBytes = field.keepsBytes
        if !bytes.isEmpty { bytes.removeAll(keepingCapacity: bytes.capacity <= 64 * 1024) }
        // Most are empty already (the last field's text was taken): no release of nothing.
        if onlyText != nil { onlyText = nil }
        hasMarkup = false
        isXHTML = false
        isBase64 = false
        if !openChildren.isEmpty { openChildren.removeAll(keepingCapacity: true) }
        if extras != nil { extras = nil }
    }

    mutating func appendText(_ text: XMLBytes) {
        if hasMarkup {
            Self.appendEscaped(text.buffer, to: &bytes, attribute: false)
        } else if keepsBytes {
            bytes.append(contentsOf: text.buffer)
        } else if bytes.isEmpty && onlyText == nil {
            onlyText = text.string
            // Most fields are one node with nothing around it: then `value()` has nothing to trim (~130 instructions
            // a field through String's UTF-8 view; issue 18).
            let buffer = text.buffer
            onlyTextIsTrimmed = buffer.isEmpty || (!Self.isXMLSpace(buffer[0]) && !Self.isXMLSpace(buffer[buffer.count - 1]))
        } else {
            moveOnlyTextToBytes()
            bytes.append(contentsOf: text.buffer)
        }
    }

    /// Bytes captured so far, for the size limit.
    var count: Int { bytes.count + (onlyText?.utf8.count ?? 0) }

    private mutating func moveOnlyTextToBytes() {
        guard let text = onlyText else { return }
        onlyText = nil
        bytes.append(contentsOf: text.utf8)
    }

    /// Writes a child's start tag. `isHTML`: the child is HTML markup, written without a prefix or a namespace: in
    /// XHTML's namespace, in none, or (unprefixed) in the feed's own, which markup written straight into a feed
    /// element inherits. Children in any other namespace (SVG, MathML) keep it, declared where it changes.
    mutating func startChild(_ name: XMLName, attributes: XMLAttributes, isHTML: Bool) {
        moveOnlyTextToBytes()
        if !hasMarkup {
            // Text so far was plain; from here on the field is markup, so escape what came before.
            let plain = bytes
            bytes.removeAll(keepingCapacity: true)
            plain.withUnsafeBufferPointer { Self.appendEscaped($0, to: &bytes, attribute: false) }
            hasMarkup = true
        }
        let childDepth = openChildren.count + 1
        bytes.append(0x3C)
        if isHTML {
            bytes.append(contentsOf: name.localName.buffer)  // XHTML is written as HTML: no prefix
        } else {
            Self.appendName(name, to: &bytes)
        }
        // Elements of other vocabularies (SVG, MathML, …) keep their namespace: declared where it changes.
        if isHTML {
            if extras != nil && !declared.isEmpty { declareDefaultXHTMLIfNeeded(at: childDepth) }
        } else if name.prefix.isEmpty {
            declareIfNeeded(prefix: UnsafeBufferPointer(start: nil, count: 0), uri: name.namespaceURI.buffer, at: childDepth)
        }
        if !isHTML && !name.prefix.isEmpty {
            declareIfNeeded(prefix: name.prefix.buffer, uri: name.namespaceURI.buffer, at: childDepth)
        }
        for attribute in attributes {
            let prefix = attribute.name.prefix
            if !prefix.isEmpty && !prefix.equals("xml") && !attribute.name.namespaceURI.isEmpty {
                declareIfNeeded(prefix: prefix.buffer, uri: attribute.name.namespaceURI.buffer, at: childDepth)
            }
            bytes.append(0x20)
            Self.appendName(attribute.name, to: &bytes)
            bytes.append(contentsOf: [0x3D, 0x22])
            Self.appendEscaped(attribute.value.buffer, to: &bytes, attribute: true)
            bytes.append(0x22)
        }
        bytes.append(0x3E)
        openChildren.append(bytes.count)
    }

    mutating func endChild(_ name: XMLName, isHTML: Bool) {
        let childDepth = openChildren.count
        if extras != nil {
            while let last = declared.last, last.depth >= childDepth { declared.removeLast() }
        }
        let end = openChildren.popLast() ?? -1
        if end == bytes.count {
            bytes.removeLast()
            bytes.append(contentsOf: [0x2F, 0x3E])  // <br/>
            return
        }
        bytes.append(contentsOf: [0x3C, 0x2F])
        if isHTML {
            bytes.append(contentsOf: name.localName.buffer)
        } else {
            Self.appendName(name, to: &bytes)
        }
        bytes.append(0x3E)
    }


    /// Back to HTML inside another vocabulary (XHTML in SVG's `foreignObject`): declares XHTML the default again.
    private mutating func declareDefaultXHTMLIfNeeded(at depth: Int) {
        guard let binding = declared.last(where: { $0.prefix.isEmpty }), binding.uri != Self.xhtmlURI else { return }
        Self.xhtmlURI.withUnsafeBufferPointer { declare(prefix: UnsafeBufferPointer(start: nil, count: 0), uri: $0, at: depth) }
    }

    private static let xhtmlURI = Array("http://www.w3.org/1999/xhtml".utf8)

    /// Writes ` xmlns="uri"` or ` xmlns:prefix="uri"` on the start tag being written, unless the serialised markup
    /// already binds the prefix to the URI there.
    private mutating func declareIfNeeded(prefix: UnsafeBufferPointer<UInt8>, uri: UnsafeBufferPointer<UInt8>, at depth: Int) {
        if let binding = declared.last(where: { $0.prefix.elementsEqual(prefix) }), binding.uri.elementsEqual(uri) { return }
        declare(prefix: prefix, uri: uri, at: depth)
    }

    private mutating func declare(prefix: UnsafeBufferPointer<UInt8>, uri: UnsafeBufferPointer<UInt8>, at depth: Int) {
        declared.append((depth, Array(prefix), Array(uri)))
        bytes.append(contentsOf: [0x20, 0x78, 0x6D, 0x6C, 0x6E, 0x73])  // " xmlns"
        if !prefix.isEmpty {
            bytes.append(0x3A)
            bytes.append(contentsOf: prefix)
        }
        bytes.append(contentsOf: [0x3D, 0x22])
        Self.appendEscaped(uri, to: &bytes, attribute: true)
        bytes.append(0x22)
    }

    private static func appendName(_ name: XMLName, to bytes: inout [UInt8]) {
        if !name.prefix.isEmpty {
            bytes.append(contentsOf: name.prefix.buffer)
            bytes.append(0x3A)
        }
        bytes.append(contentsOf: name.localName.buffer)
    }

    static func appendEscaped(_ text: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8], attribute: Bool) {
        for byte in text {
            switch byte {
            case 0x26: bytes.append(contentsOf: [0x26, 0x61, 0x6D, 0x70, 0x3B])  // &amp;
            case 0x3C: bytes.append(contentsOf: [0x26, 0x6C, 0x74, 0x3B])  // &lt;
            case 0x3E: bytes.append(contentsOf: [0x26, 0x67, 0x74, 0x3B])  // &gt;
            case 0x22 where attribute: bytes.append(contentsOf: [0x26, 0x71, 0x75, 0x6F, 0x74, 0x3B])  // &quot;
            default: bytes.append(byte)
            }
        }
    }

    /// Calls `body` with ``value()``'s bytes in place, when the value is plain collected bytes (not base64, not XHTML,
    /// not one text node kept as a `String`); `nil` without calling it otherwise.
    func withPlainValueBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result? {
        guard !isBase64 && !isXHTML && onlyText == nil else { return nil }
        return bytes.withUnsafeBufferPointer { body(Self.trimmed($0)) }
    }

    /// ``value()`` as UTF-8 bytes, made without a `String` in the common case (not base64, not XHTML).
    func valueBytes() -> [UInt8] {
        withPlainValueBytes { Array($0) } ?? Array(value().utf8)
    }

    /// The captured value, trimmed; the XHTML wrapper `div` removed for Atom `xhtml` text.
    func value() -> String {
        var text = onlyText.map { onlyTextIsTrimmed ? $0 : $0.trimmingXMLWhitespace() } ?? bytes.withUnsafeBufferPointer { String(decoding: Self.trimmed($0), as: UTF8.self) }
        if isBase64, let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters),
           let decoded = String(data: data, encoding: .utf8) {
            // Undecodable or non-UTF-8 payloads stay as they were written rather than being lost.
            return decoded.trimmingXMLWhitespace()
        }
        if isXHTML, text.hasPrefix("<div"), text.hasSuffix("</div>"), let open = text.firstIndex(of: ">") {
            text = String(text[text.index(after: open)..<text.index(text.endIndex, offsetBy: -6)]).trimmingXMLWhitespace()
        }
        return text
    }

    @inline(__always) private static func isXMLSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }

    /// `buffer` without leading and trailing XML white space.
    private static func trimmed(_ buffer: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0, end = buffer.count
        while start < end && isXMLSpace(buffer[start]) { start += 1 }
        while end > start && isXMLSpace(buffer[end - 1]) { end -= 1 }
        return UnsafeBufferPointer(rebasing: buffer[start..<end])
    }

    /// The form of an Atom text construct from its `type` (RFC 4287 section 3.1) and Atom 0.3's `mode`.
    static func atomTextForm(_ attributes: XMLAttributes) -> (kind: TextContent.Kind, xhtml: Bool, base64: Bool) {
        let mode = attributes.value(localName: "mode")?.string.trimmingXMLWhitespace().lowercased()
        let isBase64Mode = mode == "base64"
        guard let type = attributes.value(localName: "type")?.string.trimmingXMLWhitespace().lowercased(), !type.isEmpty else {
            return (mode == "escaped" ? .html : .text, false, isBase64Mode)
        }
        if type == "html" || type == "text/html" { return (.html, false, isBase64Mode) }
        if type == "xhtml" || type == "application/xhtml+xml" { return (.html, !isBase64Mode && mode != "escaped", isBase64Mode) }
        if type == "text" || type.hasPrefix("text/") { return (.text, false, isBase64Mode) }
        // A media type that is neither text nor XML: RFC 4287 says the content is base64 (section 4.1.3.3).
        let isXML = type.hasSuffix("+xml") || type.hasSuffix("/xml")
        return (.text, false, isBase64Mode || !isXML)
    }
}
