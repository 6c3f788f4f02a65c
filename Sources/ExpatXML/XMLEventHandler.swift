import Foundation

/// A borrowed view of UTF-8 bytes inside the parser, valid only during the callback that hands it out.
///
/// Copy what you need (``string``, `Array(buffer)`) before the callback returns; never store the view.
public struct XMLBytes {
    /// The bytes, UTF-8.
    public let buffer: UnsafeBufferPointer<UInt8>

    /// Wraps a buffer.
    @inlinable public init(_ buffer: UnsafeBufferPointer<UInt8>) { self.buffer = buffer }

    /// The number of bytes.
    @inlinable public var count: Int { buffer.count }

    /// Whether there are no bytes.
    @inlinable public var isEmpty: Bool { buffer.isEmpty }

    /// The bytes decoded as a `String` (one allocation; invalid UTF-8 cannot occur, expat has checked it).
    @inlinable public var string: String { String(decoding: buffer, as: UTF8.self) }

    /// Whether the bytes equal an ASCII or UTF-8 literal, without creating a `String`.
    @inlinable public func equals(_ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { other in
            other.count == buffer.count && (buffer.isEmpty || memcmp(other.baseAddress!, buffer.baseAddress!, buffer.count) == 0)
        }
    }

    /// Whether every byte is XML white space (space, tab, CR, LF).
    @inlinable public var isWhitespace: Bool {
        for byte in buffer where byte != 0x20 && byte != 0x0A && byte != 0x09 && byte != 0x0D { return false }
        return true
    }
}

@available(*, unavailable, message: "a view into parser memory; copy it with .string or Array(.buffer)")
extension XMLBytes: Sendable {}

/// An element or attribute name as expat reports it: namespace URI, local name and prefix, as byte views.
///
/// Valid only during the callback that hands it out.
public struct XMLName {
    /// The namespace URI; empty when the name is in no namespace (or namespaces are not processed).
    public let namespaceURI: XMLBytes
    /// The local part, after the prefix (the whole name as written when namespaces are not processed).
    public let localName: XMLBytes
    /// The prefix as written in the document; empty for unprefixed names.
    public let prefix: XMLBytes

    /// The whole name as expat reports it: `uri SEP local SEP prefix` with namespaces, else as written.
    public let raw: XMLBytes

    /// Splits one of expat's triplet names, `uri SEP local SEP prefix` (expat.h, `XML_SetReturnNSTriplet`),
    /// with `strchr`: no per-byte Swift loop.
    @inlinable init(expatName: UnsafePointer<CChar>, separator: UInt8) {
        let bytes = UnsafeRawPointer(expatName).assumingMemoryBound(to: UInt8.self)
        let length = strlen(expatName)
        raw = XMLBytes(UnsafeBufferPointer(start: bytes, count: length))
        guard separator != 0, let first = strchr(expatName, Int32(separator)) else {
            namespaceURI = XMLBytes(UnsafeBufferPointer(start: bytes, count: 0))
            localName = raw
            prefix = XMLBytes(UnsafeBufferPointer(start: bytes + length, count: 0))
            return
        }
        let firstOffset = expatName.distance(to: first)
        namespaceURI = XMLBytes(UnsafeBufferPointer(start: bytes, count: firstOffset))
        if let second = strchr(first + 1, Int32(separator)) {
            let secondOffset = expatName.distance(to: second)
            localName = XMLBytes(UnsafeBufferPointer(start: bytes + firstOffset + 1, count: secondOffset - firstOffset - 1))
            prefix = XMLBytes(UnsafeBufferPointer(start: bytes + secondOffset + 1, count: length - secondOffset - 1))
        } else {
            localName = XMLBytes(UnsafeBufferPointer(start: bytes + firstOffset + 1, count: length - firstOffset - 1))
            prefix = XMLBytes(UnsafeBufferPointer(start: bytes + length, count: 0))
        }
    }

    /// The qualified name as written, `prefix:local` or `local`.
    public var qualifiedName: String {
        prefix.isEmpty ? localName.string : prefix.string + ":" + localName.string
    }
}

@available(*, unavailable, message: "a view into parser memory; copy what you need during the callback")
extension XMLName: Sendable {}

/// The attributes of one start tag, as byte views; nothing is decoded until asked.
///
/// Valid only during the ``XMLEventHandler/startElement(_:attributes:)`` call that hands it out.
public struct XMLAttributes: Sequence {
    @usableFromInline let pairs: UnsafePointer<UnsafePointer<CChar>?>?
    @usableFromInline let separator: UInt8

    @inlinable init(pairs: UnsafePointer<UnsafePointer<CChar>?>?, separator: UInt8) {
        self.pairs = pairs
        self.separator = separator
    }

    /// Whether the start tag has no attributes.
    @inlinable public var isEmpty: Bool { pairs?[0] == nil }

    /// One attribute: its name and its value (normalised and entity-expanded by expat).
    public struct Element {
        /// The attribute's name.
        public let name: XMLName
        /// The attribute's value, UTF-8.
        public let value: XMLBytes

        @inlinable init(name: XMLName, value: XMLBytes) {
            self.name = name
            self.value = value
        }
    }

    /// Walks the attributes in document order.
    public struct Iterator: IteratorProtocol {
        @usableFromInline var cursor: UnsafePointer<UnsafePointer<CChar>?>?
        @usableFromInline let separator: UInt8

        @inlinable init(cursor: UnsafePointer<UnsafePointer<CChar>?>?, separator: UInt8) {
            self.cursor = cursor
            self.separator = separator
        }

        @inlinable public mutating func next() -> Element? {
            guard let cursor, let namePointer = cursor[0], let valuePointer = cursor[1] else { return nil }
            self.cursor = cursor + 2
            let value = UnsafeBufferPointer(
                start: UnsafeRawPointer(valuePointer).assumingMemoryBound(to: UInt8.self), count: strlen(valuePointer))
            return Element(name: XMLName(expatName: namePointer, separator: separator), value: XMLBytes(value))
        }
    }

    /// An iterator over the attributes.
    @inlinable public func makeIterator() -> Iterator { Iterator(cursor: pairs, separator: separator) }

    /// The value of the attribute in no namespace named `name`, ASCII case ignored when `ignoringCase` (`HREF` for
    /// `href`), if present. Reads expat's names as they are instead of splitting each: a name in no namespace is just
    /// its local part there, and any other carries a separator, so a length and a byte comparison decide.
    @inlinable public func value(noNamespaceNamed name: StaticString, ignoringCase: Bool) -> XMLBytes? {
        guard var cursor = pairs else { return nil }
        let length = name.utf8CodeUnitCount
        let literal = name.utf8Start
        while let namePointer = cursor[0], let valuePointer = cursor[1] {
            cursor += 2
            // Byte by byte up to the first difference (most names differ at their first byte), then the name must end
            // where the literal does. A shorter name differs at its NUL, which no literal holds, so nothing past the
            // NUL is read. (`strlen` and `memcmp` for every attribute were ~150 instructions a look-up; issue 18.)
            let bytes = UnsafeRawPointer(namePointer).assumingMemoryBound(to: UInt8.self)
            var offset = 0
            while offset < length {
                let byte = bytes[offset], wanted = literal[offset]
                if byte != wanted {
                    guard ignoringCase else { break }
                    let folded = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                    let foldedWanted = wanted >= 0x41 && wanted <= 0x5A ? wanted | 0x20 : wanted
                    if folded != foldedWanted { break }
                }
                offset += 1
            }
            if offset == length && bytes[length] == 0 {
                return XMLBytes(UnsafeBufferPointer(
                    start: UnsafeRawPointer(valuePointer).assumingMemoryBound(to: UInt8.self), count: strlen(valuePointer)))
            }
        }
        return nil
    }

    /// Whether an attribute is in the XML namespace (`xml:base`, `xml:lang`, `xml:space`), found without splitting names;
    /// always `false` when namespaces are not processed (there is no namespace to be in).
    public var hasXMLNamespaceAttribute: Bool {
        guard separator != 0, var cursor = pairs else { return false }
        let uri: StaticString = "http://www.w3.org/XML/1998/namespace"
        let length = uri.utf8CodeUnitCount
        while let namePointer = cursor[0] {
            cursor += 2
            let bytes = UnsafeRawPointer(namePointer).assumingMemoryBound(to: UInt8.self)
            // memcmp stops at the first difference: a shorter name differs at its NUL, before the end of either.
            if bytes[0] == 0x68 && memcmp(bytes, uri.utf8Start, length) == 0 && bytes[length] == separator { return true }
        }
        return false
    }

    /// The value of the attribute with this local name and namespace URI (empty for none), if present.
    @inlinable public func value(localName: StaticString, namespaceURI: StaticString = "") -> XMLBytes? {
        for attribute in self where attribute.name.localName.equals(localName) && attribute.name.namespaceURI.equals(namespaceURI) {
            return attribute.value
        }
        return nil
    }
}

@available(*, unavailable, message: "a view into parser memory; copy what you need during the callback")
extension XMLAttributes: Sendable {}

/// Receives a document's events as byte views: the fast path, with no `String` or dictionary per event.
///
/// Text arrives once per text node, whole: all character data between two pieces of markup, with
/// entity and character references expanded and (by default) CDATA sections merged in. The events for a
/// document never depend on how its bytes were split into chunks. Every view is valid only during the
/// call that hands it out. Every method has an empty default, so implement only what you need.
public protocol XMLEventHandler: AnyObject {
    /// The parser is about to deliver the document's first event.
    func startDocument()
    /// An element opens. `attributes` is lazy: nothing is decoded unless you read it.
    func startElement(_ name: XMLName, attributes: XMLAttributes)
    /// An element closes.
    func endElement(_ name: XMLName)
    /// One whole text node, white space included.
    func text(_ text: XMLBytes)
    /// One CDATA section, only when ``ExpatXMLConfiguration/cdataHandling`` is ``ExpatXMLConfiguration/CDATAHandling/separate``.
    func cdata(_ text: XMLBytes)
    /// A namespace prefix comes into scope; `prefix` is empty for the default namespace.
    func startPrefixMapping(prefix: XMLBytes, namespaceURI: XMLBytes)
    /// A namespace prefix goes out of scope.
    func endPrefixMapping(prefix: XMLBytes)
    /// A comment, without `<!--` and `-->`.
    func comment(_ text: XMLBytes)
    /// A processing instruction other than the XML declaration.
    func processingInstruction(target: XMLBytes, data: XMLBytes)
    /// The document type declaration begins: its root name and its external identifiers (empty when absent). Nothing
    /// it names is ever loaded.
    func startDoctype(name: XMLBytes, systemID: XMLBytes, publicID: XMLBytes)
    /// The document ended well-formed.
    func endDocument()
}

extension XMLEventHandler {
    public func startDocument() {}
    public func startElement(_ name: XMLName, attributes: XMLAttributes) {}
    public func endElement(_ name: XMLName) {}
    public func text(_ text: XMLBytes) {}
    public func cdata(_ text: XMLBytes) {}
    public func startPrefixMapping(prefix: XMLBytes, namespaceURI: XMLBytes) {}
    public func endPrefixMapping(prefix: XMLBytes) {}
    public func comment(_ text: XMLBytes) {}
    public func processingInstruction(target: XMLBytes, data: XMLBytes) {}
    public func startDoctype(name: XMLBytes, systemID: XMLBytes, publicID: XMLBytes) {}
    public func endDocument() {}
}
