import Foundation

/// Receives a document's events as strings, like Foundation's `XMLParserDelegate`.
///
/// The methods and their meaning mirror `XMLParserDelegate` with namespace processing on, so a Foundation
/// user can adopt it without thinking. The one difference: ``parser(_:foundCharacters:)-7ztth`` is called once per
/// text node with the whole text, never with fragments (and, by default, CDATA sections are part of it).
/// Every method has an empty default.
public protocol ExpatXMLParserDelegate: AnyObject {
    /// Parsing is about to deliver the document's first event.
    func parserDidStartDocument(_ parser: ExpatXMLParser)
    /// The document ended well-formed.
    func parserDidEndDocument(_ parser: ExpatXMLParser)
    /// An element opens. With namespace processing, `elementName` is the local name, `namespaceURI` is the
    /// namespace (empty for none) and `qName` the name as written; without it, `elementName` is the name as
    /// written and the other two are `nil`. Attributes are keyed by their qualified names, without `xmlns`.
    func parser(_ parser: ExpatXMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String])
    /// An element closes.
    func parser(_ parser: ExpatXMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?)
    /// A namespace prefix comes into scope (empty for the default namespace).
    func parser(_ parser: ExpatXMLParser, didStartMappingPrefix prefix: String, toURI namespaceURI: String)
    /// A namespace prefix goes out of scope.
    func parser(_ parser: ExpatXMLParser, didEndMappingPrefix prefix: String)
    /// One whole text node, white space included.
    func parser(_ parser: ExpatXMLParser, foundCharacters string: String)
    /// A CDATA section, only with ``ExpatXMLConfiguration/CDATAHandling/separate``.
    func parser(_ parser: ExpatXMLParser, foundCDATA CDATABlock: Data)
    /// A comment.
    func parser(_ parser: ExpatXMLParser, foundComment comment: String)
    /// A processing instruction.
    func parser(_ parser: ExpatXMLParser, foundProcessingInstructionWithTarget target: String, data: String?)
    /// Parsing stopped with an error; the `parse` call then throws the same error.
    func parser(_ parser: ExpatXMLParser, parseErrorOccurred parseError: ExpatXMLError)
    /// Whether the attributes of this element are wanted. Return `false` to skip building the dictionary;
    /// the element is then reported with no attributes. The iPhoneExpat idea: pay only for what you use.
    func shouldProcessAttributes(forElement elementName: String, namespaceURI: String?) -> Bool
}

extension ExpatXMLParserDelegate {
    public func parserDidStartDocument(_ parser: ExpatXMLParser) {}
    public func parserDidEndDocument(_ parser: ExpatXMLParser) {}
    public func parser(_ parser: ExpatXMLParser, didStartElement elementName: String, namespaceURI: String?,
                       qualifiedName qName: String?, attributes attributeDict: [String: String]) {}
    public func parser(_ parser: ExpatXMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {}
    public func parser(_ parser: ExpatXMLParser, didStartMappingPrefix prefix: String, toURI namespaceURI: String) {}
    public func parser(_ parser: ExpatXMLParser, didEndMappingPrefix prefix: String) {}
    public func parser(_ parser: ExpatXMLParser, foundCharacters string: String) {}
    public func parser(_ parser: ExpatXMLParser, foundCDATA CDATABlock: Data) {}
    public func parser(_ parser: ExpatXMLParser, foundComment comment: String) {}
    public func parser(_ parser: ExpatXMLParser, foundProcessingInstructionWithTarget target: String, data: String?) {}
    public func parser(_ parser: ExpatXMLParser, parseErrorOccurred parseError: ExpatXMLError) {}
    public func shouldProcessAttributes(forElement elementName: String, namespaceURI: String?) -> Bool { true }
}

/// A streaming XML parser over libexpat with a Foundation-style delegate.
///
/// Push bytes as they arrive and finish:
///
/// ```swift
/// let parser = ExpatXMLParser()
/// parser.delegate = myDelegate
/// try parser.parse(firstChunk)
/// try parser.parse(secondChunk)
/// try parser.finish()
/// ```
///
/// or parse a whole input with ``parse(data:)`` or ``parse(contentsOfFile:chunkSize:)``. Element and attribute
/// names are interned, so a name that repeats costs no new `String`. For the lowest cost use ``XMLPushParser``
/// and its byte views directly. A parser is confined to one thread: it is deliberately not `Sendable`.
public final class ExpatXMLParser {
    /// Receives the events. Held weakly, as Foundation's `XMLParser` does.
    public weak var delegate: (any ExpatXMLParserDelegate)?

    private let core: XMLPushParser
    private let adapter: StringEventAdapter

    /// Creates a parser; `source` names the input in errors.
    public init(configuration: ExpatXMLConfiguration = .init(), source: String? = nil) {
        adapter = StringEventAdapter(processesNamespaces: configuration.processesNamespaces)
        core = XMLPushParser(handler: adapter, configuration: configuration, source: source)
        adapter.owner = self
    }

    /// The configuration in use.
    public var configuration: ExpatXMLConfiguration { core.configuration }
    /// The encoding chosen for the document, once parsing has started.
    public var encoding: DocumentEncoding? { core.encoding }
    /// The 1-based line of the current event.
    public var lineNumber: Int { core.lineNumber }
    /// The 0-based column of the current event.
    public var columnNumber: Int { core.columnNumber }
    /// The input's name, used in errors.
    public var source: String? {
        get { core.source }
        set { core.source = newValue }
    }

    /// Parses the next bytes of the document; any split gives the same events.
    public func parse(_ bytes: UnsafeRawBufferPointer) throws(ExpatXMLError) {
        let delegate = self.delegate  // one weak load per call, not per event; held until the call returns
        adapter.delegate = delegate
        defer { adapter.delegate = nil }
        do { try withExtendedLifetime(delegate) { () throws(ExpatXMLError) in try core.parse(bytes) } } catch { throw report(error) }
    }

    /// Parses the next bytes of the document, from `Data`, `[UInt8]` or any contiguous storage.
    public func parse(_ bytes: some ContiguousBytes) throws(ExpatXMLError) {
        let delegate = self.delegate  // one weak load per call, not per event; held until the call returns
        adapter.delegate = delegate
        defer { adapter.delegate = nil }
        do { try withExtendedLifetime(delegate) { () throws(ExpatXMLError) in try core.parse(bytes) } } catch { throw report(error) }
    }

    /// Ends the document: checks that it is complete and reports the end.
    public func finish() throws(ExpatXMLError) {
        let delegate = self.delegate  // one weak load per call, not per event; held until the call returns
        adapter.delegate = delegate
        defer { adapter.delegate = nil }
        do { try withExtendedLifetime(delegate) { () throws(ExpatXMLError) in try core.finish() } } catch { throw report(error) }
    }

    /// Parses a whole document held in memory, then finishes.
    public func parse(data: Data) throws(ExpatXMLError) {
        try parse(data)
        try finish()
    }

    /// Parses a file, reading it in chunks so memory stays flat, then finishes.
    public func parse(contentsOfFile path: String, chunkSize: Int = 64 * 1024) throws(ExpatXMLError) {
        if source == nil { source = path }
        let delegate = self.delegate
        adapter.delegate = delegate
        defer {
            adapter.delegate = nil
            withExtendedLifetime(delegate) {}
        }
        do {
            try FileChunks.read(path: path, chunkSize: chunkSize) { (chunk) throws(ExpatXMLError) in try core.parse(chunk) }
            try core.finish()
        } catch {
            throw report(error)
        }
    }

    /// Whether text is reported through ``ExpatXMLParserDelegate/parser(_:foundCharacters:)-7ztth``. Default `true`.
    ///
    /// A delegate that needs the text of a few elements only sets it to `false` at the start of the document and
    /// switches it on in `didStartElement` for the elements it wants, off again in `didEndElement`: the text it
    /// skips is never copied and no `String` is made for it (libexpat is not even asked for it). Most of a feed's
    /// bytes are descriptions and content; a delegate that keeps only titles, links, ids and dates spends about
    /// half the instructions with it (see the README's Benchmarks). A change applies to the text after the tag
    /// whose callback made it (text before a tag is reported before the tag's callback). CDATA sections
    /// delivered separately (``ExpatXMLConfiguration/cdataHandling``) are not affected.
    public var reportsCharacters: Bool {
        get { core.isCollectingText }
        set { core.isCollectingText = newValue }
    }

    /// Stops parsing from inside a delegate callback; the current `parse` call throws ``ExpatXMLError/Code/aborted``.
    public func abortParsing() { core.abortParsing() }

    private var reported = false
    private func report(_ error: ExpatXMLError) -> ExpatXMLError {
        if !reported {
            reported = true
            delegate?.parser(self, parseErrorOccurred: error)
        }
        return error
    }
}

@available(*, unavailable, message: "a parser is confined to one thread")
extension ExpatXMLParser: Sendable {}

/// Reads a file in chunks for any parser.
enum FileChunks {
    static func read(path: String, chunkSize: Int, _ body: (Data) throws(ExpatXMLError) -> Void) throws(ExpatXMLError) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
            throw ExpatXMLError(code: .readFailed, message: "\(path) \(reason)", source: path)
        }
        defer { try? handle.close() }
        while true {
            let chunk: Data?
            do { chunk = try handle.read(upToCount: max(1, chunkSize)) } catch {
                throw ExpatXMLError(code: .readFailed, message: "reading \(path) failed: \(error.localizedDescription)", source: path)
            }
            guard let chunk, !chunk.isEmpty else { return }
            try body(chunk)
        }
    }
}

extension XMLPushParser {
    /// Parses a file, reading it in chunks so memory stays flat, then finishes.
    public func parse(contentsOfFile path: String, chunkSize: Int = 64 * 1024) throws(ExpatXMLError) {
        if source == nil { source = path }
        try FileChunks.read(path: path, chunkSize: chunkSize) { (chunk) throws(ExpatXMLError) in try parse(chunk) }
        try finish()
    }

    /// Parses a whole document held in memory, then finishes.
    public func parse(data: Data) throws(ExpatXMLError) {
        try parse(data)
        try finish()
    }
}

/// Turns byte events into the delegate's strings, interning names and short white-space text.
///
/// Its mutable state lives in a struct behind a pointer, as the parser's does: the per-event work then
/// pays no dynamic exclusivity check on class properties (measured: ~10% of the String API's instructions).
final class StringEventAdapter: XMLEventHandler {
    struct State {
        unowned(unsafe) var owner: ExpatXMLParser?
        /// The delegate, set only while a `parse` or `finish` call runs, which holds it strongly. Unowned here: a
        /// delegate is usually referenced weakly too (by ``ExpatXMLParser/delegate``), which moves its reference
        /// count to a side table where every retain and release takes the slow path; with a strong reference
        /// here each event paid that twice (measured: ~9% of the String API's instructions).
        unowned(unsafe) var delegate: (any ExpatXMLParserDelegate)?
        var names = NameTable()
        /// The open elements' names, so an end tag costs no lookup.
        var open: [InternedName] = []
        /// White-space-only text nodes up to 64 bytes: the indentation between elements repeats, and a
        /// handful of distinct ones cover a document. Compared by length and `memcmp`, no allocation.
        var whitespace: [(bytes: [UInt8], string: String)] = []
    }

    private let state: UnsafeMutablePointer<State>
    private let processesNamespaces: Bool

    init(processesNamespaces: Bool) {
        self.processesNamespaces = processesNamespaces
        state = .allocate(capacity: 1)
        state.initialize(to: State())
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    var owner: ExpatXMLParser {
        get { state.pointee.owner! }
        set { state.pointee.owner = newValue }
    }

    var delegate: (any ExpatXMLParserDelegate)? {
        get { state.pointee.delegate }
        set { state.pointee.delegate = newValue }
    }

    func startDocument() {
        state.pointee.delegate?.parserDidStartDocument(owner)
    }

    func endDocument() {
        state.pointee.delegate?.parserDidEndDocument(owner)
    }

    func startElement(_ name: XMLName, attributes: XMLAttributes) {
        let element = state.pointee.names.intern(name)
        state.pointee.open.append(element)
        guard let delegate = state.pointee.delegate else { return }
        let uri = processesNamespaces ? element.namespaceURI : nil
        var dictionary: [String: String] = [:]
        if !attributes.isEmpty && delegate.shouldProcessAttributes(forElement: element.localName, namespaceURI: uri) {
            for attribute in attributes {
                dictionary[state.pointee.names.intern(attribute.name).qualifiedName] = attribute.value.string
            }
        }
        delegate.parser(owner, didStartElement: element.localName, namespaceURI: uri,
                        qualifiedName: processesNamespaces ? element.qualifiedName : nil, attributes: dictionary)
    }

    func endElement(_ name: XMLName) {
        let element = state.pointee.open.popLast() ?? state.pointee.names.intern(name)
        guard let delegate = state.pointee.delegate else { return }
        delegate.parser(owner, didEndElement: element.localName, namespaceURI: processesNamespaces ? element.namespaceURI : nil,
                        qualifiedName: processesNamespaces ? element.qualifiedName : nil)
    }

    func text(_ text: XMLBytes) {
        guard let delegate = state.pointee.delegate else { return }
        if text.count <= 64 && text.isWhitespace {
            for entry in state.pointee.whitespace where entry.bytes.count == text.count
                && entry.bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress!, text.buffer.baseAddress!, text.count) }) == 0 {
                return delegate.parser(owner, foundCharacters: entry.string)
            }
            let string = text.string
            if state.pointee.whitespace.count < 32 { state.pointee.whitespace.append((Array(text.buffer), string)) }
            return delegate.parser(owner, foundCharacters: string)
        }
        delegate.parser(owner, foundCharacters: text.string)
    }

    func cdata(_ text: XMLBytes) {
        state.pointee.delegate?.parser(owner, foundCDATA: Data(text.buffer))
    }

    func startPrefixMapping(prefix: XMLBytes, namespaceURI: XMLBytes) {
        state.pointee.delegate?.parser(owner, didStartMappingPrefix: prefix.string, toURI: namespaceURI.string)
    }

    func endPrefixMapping(prefix: XMLBytes) {
        state.pointee.delegate?.parser(owner, didEndMappingPrefix: prefix.string)
    }

    func comment(_ text: XMLBytes) {
        state.pointee.delegate?.parser(owner, foundComment: text.string)
    }

    func processingInstruction(target: XMLBytes, data: XMLBytes) {
        state.pointee.delegate?.parser(owner, foundProcessingInstructionWithTarget: target.string, data: data.string)
    }
}

/// The strings of one interned name.
struct InternedName {
    let localName: String
    let namespaceURI: String
    let qualifiedName: String
}

/// An open-addressing table from a name's raw bytes (expat's `uri SEP local SEP prefix`) to its strings,
/// so repeated names allocate nothing.
///
/// The hash reads the length and the first and last eight bytes, not every byte: names that share
/// those are told apart by `memcmp` while probing. Bounded: past half the slots, new names are decoded
/// but not kept, so a document of endless distinct names cannot grow it.
struct NameTable {
    private struct Entry {
        let hash: Int
        let key: [UInt8]
        let value: InternedName
    }

    private var slots: [Entry?] = Array(repeating: nil, count: 1024)
    private var count = 0

    mutating func intern(_ name: XMLName) -> InternedName {
        let raw = name.raw.buffer
        let hash = Self.hash(raw)
        let mask = slots.count - 1
        var index = hash & mask
        while let entry = slots[index] {
            if entry.hash == hash && entry.key.count == raw.count
                && (raw.isEmpty || entry.key.withUnsafeBufferPointer { memcmp($0.baseAddress!, raw.baseAddress!, raw.count) } == 0) {
                return entry.value
            }
            index = (index + 1) & mask
        }
        let value = InternedName(localName: name.localName.string, namespaceURI: name.namespaceURI.string,
                                 qualifiedName: name.qualifiedName)
        if count < slots.count / 2 {
            slots[index] = Entry(hash: hash, key: Array(raw), value: value)
            count += 1
        }
        return value
    }

    @inline(__always) private static func hash(_ raw: UnsafeBufferPointer<UInt8>) -> Int {
        var head: UInt64 = 0
        var tail: UInt64 = 0
        if raw.count >= 8 {
            head = UnsafeRawPointer(raw.baseAddress!).loadUnaligned(as: UInt64.self)
            tail = UnsafeRawPointer(raw.baseAddress! + raw.count - 8).loadUnaligned(as: UInt64.self)
        } else {
            for byte in raw { head = head << 8 | UInt64(byte) }
        }
        var mixed = (head ^ (tail &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(raw.count)) &* 0xBF58_476D_1CE4_E5B9
        mixed ^= mixed >> 31
        return Int(truncatingIfNeeded: mixed)
    }
}
