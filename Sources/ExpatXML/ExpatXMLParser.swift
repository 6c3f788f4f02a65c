import Foundation
import Support

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
        try delivering { () throws(ExpatXMLError) in try core.parse(bytes) }
    }

    /// Parses the next bytes of the document, from `Data`, `[UInt8]` or any contiguous storage.
    public func parse(_ bytes: some ContiguousBytes) throws(ExpatXMLError) {
        try delivering { () throws(ExpatXMLError) in try core.parse(bytes) }
    }

    /// Ends the document: checks that it is complete and reports the end.
    public func finish() throws(ExpatXMLError) {
        try delivering { () throws(ExpatXMLError) in try core.finish() }
    }

    /// Parses a whole document held in memory, then finishes.
    public func parse(data: Data) throws(ExpatXMLError) {
        try parse(data)
        try finish()
    }

    /// Parses a file, reading it in chunks so memory stays flat, then finishes.
    public func parse(contentsOfFile path: String, chunkSize: Int = 64 * 1024) throws(ExpatXMLError) {
        if source == nil { source = path }
        try delivering { () throws(ExpatXMLError) in
            try FileChunks.read(path: path, chunkSize: chunkSize, failure: { ExpatXMLError(code: .readFailed, message: $0.message, source: path) }) {
                (chunk) throws(ExpatXMLError) in try core.parse(chunk)
            }
            try core.finish()
        }
    }

    /// Runs one `parse` or `finish` call with the delegate loaded once (one weak load per call, not per event) and
    /// held strongly, with this parser, by a ``DelegateTarget`` that lives until the call returns. The adapter
    /// reaches it unretained: an event then costs no reference counting of the delegate or the parser.
    @inline(__always) private func delivering(_ body: () throws(ExpatXMLError) -> Void) throws(ExpatXMLError) {
        let target = delegate.map { DelegateTarget(delegate: $0, owner: self) }
        let previous = adapter.target  // restored, not cleared, should a callback ever run a call of its own
        adapter.target = target.map { Unmanaged.passUnretained($0) }
        defer { adapter.target = previous }
        do { try withExtendedLifetime(target) { () throws(ExpatXMLError) in try body() } } catch { throw report(error) }
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

extension XMLPushParser {
    /// Parses a file, reading it in chunks so memory stays flat, then finishes.
    public func parse(contentsOfFile path: String, chunkSize: Int = 64 * 1024) throws(ExpatXMLError) {
        if source == nil { source = path }
        try FileChunks.read(path: path, chunkSize: chunkSize, failure: { ExpatXMLError(code: .readFailed, message: $0.message, source: path) }) {
            (chunk) throws(ExpatXMLError) in try parse(chunk)
        }
        try finish()
    }

    /// Parses a whole document held in memory, then finishes.
    public func parse(data: Data) throws(ExpatXMLError) {
        try parse(data)
        try finish()
    }
}

/// What one `parse` or `finish` call delivers its events to: the delegate and the parser, both held strongly
/// until the call returns.
final class DelegateTarget {
    let delegate: any ExpatXMLParserDelegate
    let owner: ExpatXMLParser
    /// The attributes of an element reported without any, borrowed from here: a dictionary made per event is
    /// released after it.
    let noAttributes: [String: String] = [:]

    init(delegate: any ExpatXMLParserDelegate, owner: ExpatXMLParser) {
        self.delegate = delegate
        self.owner = owner
    }
}

/// Turns byte events into the delegate's strings, interning names and short white-space text.
///
/// Its mutable state lives in a struct behind a pointer, as the parser's does: the per-event work then
/// pays no dynamic exclusivity check on class properties (measured: ~10% of the String API's instructions).
/// Everything an event reads that is a reference (the call's ``DelegateTarget``, interned names, cached white
/// space) is reached through `Unmanaged` and borrowed for the callback, so an event does no reference counting
/// of its own: a value loaded from memory before a call into the delegate would otherwise be retained and
/// released around it, and the delegate's count, with a weak reference to it, lives in a side table where both
/// take the slow path (measured: ~25% of the String API's instructions with the strings' counts).
final class StringEventAdapter: XMLEventHandler {
    /// An open element's interned name; `owned` when the name table was full and this element holds its only
    /// reference, released at the end tag.
    struct OpenElement {
        let name: Unmanaged<InternedName>
        let owned: Bool
    }

    struct State {
        /// The target of the `parse` or `finish` call that runs, which holds it; `nil` between calls and without a
        /// delegate.
        var target: Unmanaged<DelegateTarget>?
        var names: NameTable
        /// The open elements' names, so an end tag costs no lookup: a stack in memory of its own, which
        /// needs no uniqueness check per push and pop as an array in this struct does.
        var open: UnsafeMutablePointer<OpenElement> = .allocate(capacity: 64)
        var openCount = 0
        var openCapacity = 64
        /// White-space-only text nodes up to 64 bytes: the indentation between elements repeats, and a
        /// handful of distinct ones cover a document.
        var whitespace = InternTable<InternedText>(slots: 64)
        /// The attribute dictionary handed to the delegate, emptied after each start tag and filled again for the
        /// next: a dictionary made and freed per tag cost ~700 instructions (issue 18). A delegate that keeps the
        /// dictionary keeps its own copy; emptying a shared one then leaves that copy alone.
        var attributes: [String: String] = [:]
    }

    private let state: UnsafeMutablePointer<State>

    init(processesNamespaces: Bool) {
        state = .allocate(capacity: 1)
        state.initialize(to: State(names: NameTable(processesNamespaces: processesNamespaces)))
    }

    deinit {
        for index in 0..<state.pointee.openCount where state.pointee.open[index].owned { state.pointee.open[index].name.release() }
        state.pointee.open.deallocate()
        state.pointee.names.deallocate()
        state.pointee.whitespace.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    var target: Unmanaged<DelegateTarget>? {
        get { state.pointee.target }
        set { state.pointee.target = newValue }
    }

    func startDocument() {
        state.pointee.target?._withUnsafeGuaranteedRef { $0.delegate.parserDidStartDocument($0.owner) }
    }

    func endDocument() {
        state.pointee.target?._withUnsafeGuaranteedRef { $0.delegate.parserDidEndDocument($0.owner) }
    }

    func startElement(_ name: XMLName, attributes: XMLAttributes) {
        let element = state.pointee.names.intern(name)
        if state.pointee.openCount == state.pointee.openCapacity { growOpen() }
        (state.pointee.open + state.pointee.openCount).initialize(to: element)
        state.pointee.openCount += 1
        guard let target = state.pointee.target else { return }
        target._withUnsafeGuaranteedRef { target in
            element.name._withUnsafeGuaranteedRef { element in
                if attributes.isEmpty
                    || !target.delegate.shouldProcessAttributes(forElement: element.localName, namespaceURI: element.namespaceArgument) {
                    target.delegate.parser(target.owner, didStartElement: element.localName, namespaceURI: element.namespaceArgument,
                                           qualifiedName: element.qualifiedArgument, attributes: target.noAttributes)
                } else {
                    fillAttributes(attributes)
                    target.delegate.parser(target.owner, didStartElement: element.localName, namespaceURI: element.namespaceArgument,
                                           qualifiedName: element.qualifiedArgument, attributes: state.pointee.attributes)
                    emptyAttributes()
                }
            }
        }
    }

    @inline(never) private func growOpen() {
        let capacity = state.pointee.openCapacity * 2
        let grown = UnsafeMutablePointer<OpenElement>.allocate(capacity: capacity)
        grown.moveInitialize(from: state.pointee.open, count: state.pointee.openCount)
        state.pointee.open.deallocate()
        state.pointee.open = grown
        state.pointee.openCapacity = capacity
    }

    /// Fills the reused dictionary with the attributes keyed by qualified name, the names interned like the elements'.
    private func fillAttributes(_ attributes: XMLAttributes) {
        // Sized once: grown from empty, a dictionary of three attributes was reallocated twice and every key hashed
        // again each time (~700 instructions a start tag on the Atom fixture; issue 18).
        var count = 0
        if var cursor = attributes.pairs {
            while cursor.pointee != nil {
                count += 1
                cursor += 2
            }
        }
        state.pointee.attributes.reserveCapacity(count)
        for attribute in attributes {
            let name = state.pointee.names.intern(attribute.name)
            state.pointee.attributes[name.name._withUnsafeGuaranteedRef { $0.qualifiedName }] = attribute.value.string
            if name.owned { name.name.release() }
        }
    }

    /// Empties the dictionary for the next start tag, keeping its storage unless a tag with many attributes grew it.
    private func emptyAttributes() {
        if state.pointee.attributes.capacity > 64 {
            state.pointee.attributes = [:]
        } else {
            state.pointee.attributes.removeAll(keepingCapacity: true)
        }
    }

    func endElement(_ name: XMLName) {
        let element: OpenElement
        if state.pointee.openCount > 0 {
            state.pointee.openCount -= 1
            element = state.pointee.open[state.pointee.openCount]
        } else {
            element = state.pointee.names.intern(name)
        }
        defer { if element.owned { element.name.release() } }
        guard let target = state.pointee.target else { return }
        target._withUnsafeGuaranteedRef { target in
            element.name._withUnsafeGuaranteedRef { element in
                target.delegate.parser(target.owner, didEndElement: element.localName, namespaceURI: element.namespaceArgument,
                                       qualifiedName: element.qualifiedArgument)
            }
        }
    }

    func text(_ text: XMLBytes) {
        guard let target = state.pointee.target else { return }
        target._withUnsafeGuaranteedRef { target in
            guard text.count <= 64 && text.isWhitespace else {
                return target.delegate.parser(target.owner, foundCharacters: text.string)
            }
            let summary = InternTable<InternedText>.Summary(text.buffer)
            if let cached = state.pointee.whitespace.lookup(text.buffer, summary) {
                return cached._withUnsafeGuaranteedRef { target.delegate.parser(target.owner, foundCharacters: $0.string) }
            }
            let made = InternedText(string: text.string)
            _ = state.pointee.whitespace.insert(text.buffer, summary, made)
            target.delegate.parser(target.owner, foundCharacters: made.string)
        }
    }

    func cdata(_ text: XMLBytes) {
        state.pointee.target?._withUnsafeGuaranteedRef { $0.delegate.parser($0.owner, foundCDATA: Data(text.buffer)) }
    }

    func startPrefixMapping(prefix: XMLBytes, namespaceURI: XMLBytes) {
        state.pointee.target?._withUnsafeGuaranteedRef {
            $0.delegate.parser($0.owner, didStartMappingPrefix: prefix.string, toURI: namespaceURI.string)
        }
    }

    func endPrefixMapping(prefix: XMLBytes) {
        state.pointee.target?._withUnsafeGuaranteedRef { $0.delegate.parser($0.owner, didEndMappingPrefix: prefix.string) }
    }

    func comment(_ text: XMLBytes) {
        state.pointee.target?._withUnsafeGuaranteedRef { $0.delegate.parser($0.owner, foundComment: text.string) }
    }

    func processingInstruction(target: XMLBytes, data: XMLBytes) {
        state.pointee.target?._withUnsafeGuaranteedRef {
            $0.delegate.parser($0.owner, foundProcessingInstructionWithTarget: target.string, data: data.string)
        }
    }
}

/// The strings of one interned name, as the delegate is handed them.
final class InternedName {
    let localName: String
    /// The qualified name as written, the attribute dictionaries' key.
    let qualifiedName: String
    /// The `namespaceURI` argument: the namespace (empty for none) with namespace processing, else `nil`.
    let namespaceArgument: String?
    /// The `qualifiedName` argument: the name as written with namespace processing, else `nil`.
    let qualifiedArgument: String?

    init(_ name: XMLName, processesNamespaces: Bool) {
        localName = name.localName.string
        qualifiedName = name.qualifiedName
        namespaceArgument = processesNamespaces ? name.namespaceURI.string : nil
        qualifiedArgument = processesNamespaces ? qualifiedName : nil
    }
}

/// One cached white-space text node.
final class InternedText {
    let string: String

    init(string: String) { self.string = string }
}

/// Names from their raw bytes (expat's `uri SEP local SEP prefix`) to their strings, so repeated names
/// allocate nothing and cost no reference counting.
struct NameTable {
    private var table = InternTable<InternedName>(slots: 1024)
    private let processesNamespaces: Bool

    init(processesNamespaces: Bool) { self.processesNamespaces = processesNamespaces }

    /// The name's strings; `owned` when the table is full and the caller holds the only reference, to release.
    mutating func intern(_ name: XMLName) -> StringEventAdapter.OpenElement {
        let raw = name.raw.buffer
        let summary = InternTable<InternedName>.Summary(raw)
        if let found = table.lookup(raw, summary) { return .init(name: found, owned: false) }
        let made = InternedName(name, processesNamespaces: processesNamespaces)
        if table.insert(raw, summary, made) { return .init(name: .passUnretained(made), owned: false) }
        return .init(name: .passRetained(made), owned: true)
    }

    func deallocate() { table.deallocate() }
}

/// An open-addressing table from byte strings to objects it keeps alive, all in memory of its own: its slots
/// are plain values, so a lookup retains nothing. Call ``deallocate()`` once, when done.
///
/// A key is summed up by its length and two words that hold all of its bytes when it has at most 16 (the first
/// and last eight, overlapping, or fewer for short keys): for such keys, equal summaries are equal bytes, and
/// only longer ones are compared with `memcmp`. Bounded: past half the slots, nothing more is kept, so a
/// document of endless distinct names cannot grow it.
struct InternTable<Value: AnyObject> {
    /// A key's length and leading and trailing bytes, and its hash.
    struct Summary {
        let head: UInt64
        let tail: UInt64
        let count: Int
        let hash: Int

        @inline(__always) init(_ key: UnsafeBufferPointer<UInt8>) {
            let count = key.count
            let bytes = UnsafeRawPointer(key.baseAddress ?? UnsafePointer(bitPattern: 1)!)
            if count >= 8 {
                head = bytes.loadUnaligned(as: UInt64.self)
                tail = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            } else if count >= 4 {
                // Two four-byte words, overlapping when fewer than eight: with the length they fix every byte.
                head = UInt64(bytes.loadUnaligned(as: UInt32.self))
                    | UInt64(bytes.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)) << 32
                tail = 0
            } else if count > 0 {
                // The first, middle and last bytes are all the bytes of a key of one to three.
                let first = UInt64(bytes.load(as: UInt8.self))
                let middle = UInt64(bytes.load(fromByteOffset: count >> 1, as: UInt8.self))
                let last = UInt64(bytes.load(fromByteOffset: count - 1, as: UInt8.self))
                head = first | middle << 8 | last << 16
                tail = 0
            } else {
                head = 0
                tail = 0
            }
            self.count = count
            var mixed = (head ^ (tail &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(count)) &* 0xBF58_476D_1CE4_E5B9
            mixed ^= mixed >> 31
            hash = Int(truncatingIfNeeded: mixed)
        }
    }

    private struct Slot {
        var head: UInt64
        var tail: UInt64
        var count: Int
        var key: UnsafeMutablePointer<UInt8>
        var value: Unmanaged<Value>?
    }

    private let slots: UnsafeMutablePointer<Slot>
    private let mask: Int
    private var count = 0

    /// `slots` must be a power of two.
    init(slots: Int) {
        self.slots = .allocate(capacity: slots)
        self.slots.initialize(repeating: Slot(head: 0, tail: 0, count: 0, key: UnsafeMutablePointer(bitPattern: 1)!, value: nil),
                              count: slots)
        mask = slots - 1
    }

    func deallocate() {
        for index in 0...mask {
            guard let value = slots[index].value else { continue }
            value.release()
            slots[index].key.deallocate()
        }
        slots.deallocate()
    }

    /// The value kept for these bytes, borrowed from the table.
    @inline(__always) func lookup(_ key: UnsafeBufferPointer<UInt8>, _ summary: Summary) -> Unmanaged<Value>? {
        var index = summary.hash & mask
        while let value = slots[index].value {
            if slots[index].head == summary.head && slots[index].tail == summary.tail && slots[index].count == summary.count
                && (summary.count <= 16 || Self.middleBytesEqual(slots[index].key, key.baseAddress!, summary.count)) {
                return value
            }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Whether two keys of `count` (over 16) bytes, whose first and last eight bytes are known equal, are equal: eight
    /// bytes a step in place, cheaper than a `memcmp` call for names of a few dozen bytes (a namespace URI and a
    /// local name: Atom's are 30–40).
    @inline(__always) private static func middleBytesEqual(_ a: UnsafeMutablePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        let left = UnsafeRawPointer(a), right = UnsafeRawPointer(b)
        var offset = 8
        while offset < count - 8 {
            if left.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != right.loadUnaligned(fromByteOffset: offset, as: UInt64.self) {
                return false
            }
            offset += 8
        }
        return true
    }

    /// Keeps `value` for bytes not in the table, unless it is half full; whether it was kept.
    mutating func insert(_ key: UnsafeBufferPointer<UInt8>, _ summary: Summary, _ value: Value) -> Bool {
        guard count < (mask + 1) / 2 else { return false }
        var index = summary.hash & mask
        while slots[index].value != nil { index = (index + 1) & mask }
        let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: max(key.count, 1))
        if let base = key.baseAddress { copy.initialize(from: base, count: key.count) }
        slots[index] = Slot(head: summary.head, tail: summary.tail, count: summary.count, key: copy, value: .passRetained(value))
        count += 1
        return true
    }
}
