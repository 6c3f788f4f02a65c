// The one file that calls libexpat (expat.h). C callbacks reach Swift through `Unmanaged`-free raw state:
// expat's user data points at a `ParserState` struct, never at a Swift object, and nothing throws across C.
import CByteScan
import CExpat
import Foundation
import Support

/// A streaming push parser over libexpat that hands out byte views: the fast path.
///
/// Feed it bytes with ``parse(_:)-(UnsafeRawBufferPointer)`` any number of times, split anywhere, then
/// call ``finish()``. Events reach the ``XMLEventHandler`` synchronously, inside those calls. Text arrives
/// once per text node, whole. The parser retains nothing of the document but the current text node and
/// expat's own buffer for an unfinished token, so memory stays flat however long the input is.
///
/// A parser is confined to the thread that uses it: it is deliberately not `Sendable`.
public final class XMLPushParser {
    /// The configuration the parser was created with.
    public let configuration: ExpatXMLConfiguration
    /// Where the events go. The parser keeps it alive.
    public let handler: any XMLEventHandler
    /// `handler` in a box the callbacks reach unretained (``ParserState/handlerBox``), held here.
    private let handlerBox: HandlerBox
    /// The input's name (a path or URL), copied into every error.
    public var source: String?

    /// The encoding chosen for the document, once parsing has started; `nil` before, or when expat read a
    /// declaration beyond ``ExpatXMLConfiguration/maximumDeclarationBytes`` itself.
    public private(set) var encoding: DocumentEncoding?

    /// `nil` only when libexpat could not create a parser; every call then fails with the error kept in `phase`.
    private let expat: XML_Parser?
    private let state: UnsafeMutablePointer<ParserState>
    private var phase = Phase.sniffing
    private var prolog: [UInt8] = []
    private var transcoder: IconvTranscoder?
    /// Whether a NUL byte stops the parser before expat sees it (every encoding but UTF-16, which expat decodes itself).
    private var refusesNUL = true
    private var repairFilter: InputRepairFilter?
    private var strippedLeadingWhitespace = false
    private var leadingWhitespaceDecided = false
    /// The leading white space removed: bytes, newlines, and columns on its last line.
    private var stripped: (bytes: Int64, newlines: Int, lastLineColumns: Int) = (0, 0, 0)
    private var leadingWhitespaceRepairs = 0
    /// While the encoding of a document that declares none is still open (``ExpatXMLConfiguration/detectsUndeclaredEncoding``),
    /// or while its bytes are checked against its label (``labelCheck``): the bytes held back from its first byte above
    /// 0x7F. `nil` once decided, or when neither applies.
    private var undetected: [UInt8]?
    /// The label whose bytes are being checked (``ExpatXMLConfiguration/correctsMislabelledEncoding``); `nil` when the
    /// held bytes decide an undeclared encoding instead.
    private var labelCheck: LabelCheck?
    /// Bytes, from the first above 0x7F, that began no well-formed UTF-8 sequence.
    private var invalidUTF8Bytes = 0
    /// The ASCII bytes of a labelled document parsed before its first byte above 0x7F (see ``labelCheckASCIIBytes``).
    private var asciiBytesBeforeCheck: Int64 = 0
    /// The encoding expat was told to read (`XML_SetEncoding`), or UTF-8 when it reads a document that declares none;
    /// what a restarted expat is told again. `nil` when expat read the declaration itself.
    private var protocolEncoding: String?
    /// Where the current expat parser's input began, when it was restarted after an unbound prefix.
    private var restart: ExpatRestart?
    /// Prefixes used without any declaration that a restart bound (see ``restartAfterUnboundPrefix()``).
    private var recoveredPrefixes: [[UInt8]] = []

    /// What a document's label claims that its bytes may contradict.
    private enum LabelCheck: Equatable {
        /// A single-byte charset (read through iconv as `iconvName` if the label stands).
        case singleByte(iconvName: String)
        /// UTF-8.
        case utf8
    }
    /// The first byte above 0x7F was not UTF-8: the held bytes wait for libuchardet.
    private var collectingForDetection = false
    /// How many of the held bytes were walked, and how many well-formed UTF-8 sequences were found in them.
    private var detectionScanned = 0
    private var utf8Sequences = 0

    private enum Phase {
        case sniffing, parsing, finished
        case failed(ExpatXMLError)
    }

    /// Creates a parser that sends its events to `handler`.
    public init(handler: any XMLEventHandler, configuration: ExpatXMLConfiguration = .init(), source: String? = nil) {
        self.handler = handler
        handlerBox = HandlerBox(handler)
        self.configuration = configuration
        self.source = source
        let separator: UInt8 = configuration.processesNamespaces ? 0x01 : 0
        // 0x01 cannot occur in a name or a namespace URI: XML 1.0 forbids it even as a character reference.
        expat = configuration.processesNamespaces ? XML_ParserCreateNS(nil, CChar(bitPattern: separator)) : XML_ParserCreate(nil)
        state = .allocate(capacity: 1)
        state.initialize(to: ParserState(
            expat: expat, handler: handlerBox, separator: separator,
            maximumDepth: configuration.maximumDepth, maximumTextBytes: configuration.maximumTextNodeBytes,
            separateCDATA: configuration.cdataHandling == .separate))
        // An initialiser that cannot throw keeps a set-up failure for the caller's first parse(_:) or finish().
        do throws(ExpatXMLError) {
            try check(expat != nil, "XML_ParserCreate", "libexpat could not create a parser (out of memory)", code: .noMemory)
            try installHandlers()
        } catch {
            phase = .failed(error)
        }
    }

    deinit {
        XML_ParserFree(expat)
        state.pointee.text.deallocate()
        state.pointee.openNames.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    // MARK: Feeding bytes

    /// Parses the next bytes of the document. Any split is fine; events never depend on it.
    ///
    /// - Throws: ``ExpatXMLError`` when the document is not well-formed, breaks a limit, or a handler aborted.
    ///   After an error the parser is finished, and every later call throws the same error.
    public func parse(_ bytes: UnsafeRawBufferPointer) throws(ExpatXMLError) {
        switch phase {
        case .failed(let error): throw error
        case .finished: throw error(.finished, "parse(_:) called after finish()")
        case .parsing: try feed(bytes, isFinal: false)
        case .sniffing:
            prolog.append(contentsOf: bytes)
            if configuration.repairsMalformedInput && stripLeadingWhitespace(isComplete: false) { return }
            try sniff(isComplete: false)
        }
    }

    /// Parses the next bytes of the document, from any contiguous storage (`Data`, `[UInt8]`, …).
    public func parse(_ bytes: some ContiguousBytes) throws(ExpatXMLError) {
        var failure: ExpatXMLError?
        bytes.withUnsafeBytes { buffer in
            do throws(ExpatXMLError) { try parse(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Tells the parser the document is complete; it checks the end and reports ``XMLEventHandler/endDocument()``.
    public func finish() throws(ExpatXMLError) {
        switch phase {
        case .failed(let error): throw error
        case .finished: return
        case .sniffing:
            if configuration.repairsMalformedInput { _ = stripLeadingWhitespace(isComplete: true) }
            try sniff(isComplete: true)
        case .parsing: break
        }
        try feed(UnsafeRawBufferPointer(start: nil, count: 0), isFinal: true)
        phase = .finished
        handler.endDocument()
    }

    /// Stops parsing at once. Call it from a handler callback; the `parse` call in progress then throws
    /// ``ExpatXMLError/Code/aborted``, and no further event is delivered.
    public func abortParsing() {
        ParserState.fail(state, code: .aborted, message: "parsing aborted by the handler")
        if case .failed = phase { return }
        if case .finished = phase { return }
        if state.pointee.insideExpat == false { phase = .failed(makeError(state.pointee.pendingError!)) }
    }

    // MARK: Reading the position

    /// The 1-based line of the event being delivered (or of the end of the bytes parsed so far).
    public var lineNumber: Int { currentPosition.line }
    /// The 0-based column of the event being delivered.
    public var columnNumber: Int { currentPosition.column }
    /// The byte offset of the event being delivered, in the bytes of the input (after any transcoding).
    public var byteOffset: Int64 { currentPosition.offset }

    private var currentPosition: (line: Int, column: Int, offset: Int64) {
        corrected(line: Int(XML_GetCurrentLineNumber(expat)), column: Int(XML_GetCurrentColumnNumber(expat)), offset: rawByteOffset)
    }

    private var rawByteOffset: Int64 { Int64(XML_GetCurrentByteIndex(expat)) }

    /// Maps a position in the bytes expat saw back to the document as written: undoes a restart's replayed elements
    /// and declarations, the namespace declarations the repair filter added to the root tag, and counts removed
    /// leading white space back in.
    private func corrected(line: Int, column: Int, offset: Int64) -> (line: Int, column: Int, offset: Int64) {
        var (line, column, offset) = restart?.translate(line: line, column: column, offset: offset) ?? (line, column, offset)
        if let injection = repairFilter?.injection, offset >= injection.offset + Int64(injection.length) {
            if line == injection.line { column = max(0, column - injection.length) }
            offset -= Int64(injection.length)
        }
        if stripped.bytes > 0 {
            if line == 1 { column += stripped.lastLineColumns }
            line += stripped.newlines
            if offset >= 0 { offset += stripped.bytes }
        }
        return (line, column, offset)
    }

    /// Whether character data is collected into text nodes. Default `true`.
    ///
    /// A handler that knows it does not care about the text of the element it just entered can set this to
    /// `false` in ``XMLEventHandler/startElement(_:attributes:)`` and back to `true` later: uncollected character
    /// data is skipped without a copy, and no ``XMLEventHandler/text(_:)`` event is made for it.
    public var isCollectingText: Bool {
        get { state.pointee.collectingText }
        set {
            guard newValue != state.pointee.collectingText else { return }
            state.pointee.collectingText = newValue
            // Without a handler expat drops character data itself: no callback per fragment at all.
            // Separate CDATA sections still need it, so it stays installed in that mode.
            if !state.pointee.separateCDATA {
                XML_SetCharacterDataHandler(expat, newValue ? Self.characterDataHandler : nil)
            }
        }
    }

    private static let characterDataHandler: XML_CharacterDataHandler = { userData, bytes, length in
        ParserState.characters(userData!.assumingMemoryBound(to: ParserState.self), bytes!, Int(length))
    }

    private static let startElementHandler: XML_StartElementHandler = { userData, name, attributes in
        ParserState.startElement(userData!.assumingMemoryBound(to: ParserState.self), name!, attributes)
    }

    private static let endElementHandler: XML_EndElementHandler = { userData, name in
        ParserState.endElement(userData!.assumingMemoryBound(to: ParserState.self), name!)
    }

    private static let startNamespaceHandler: XML_StartNamespaceDeclHandler = { userData, prefix, uri in
        let state = userData!.assumingMemoryBound(to: ParserState.self)
        guard state.pointee.pendingError == nil else { return }
        ParserState.noteBinding(state, prefix: prefix, uri: uri)
        if ParserState.isInjectedDeclaration(state, prefix: XMLBytes(cString: prefix), starting: true) { return }
        ParserState.flushText(state)
        state.pointee.handlerBox._withUnsafeGuaranteedRef { $0.handler.startPrefixMapping(prefix: XMLBytes(cString: prefix), namespaceURI: XMLBytes(cString: uri)) }
    }

    private static let endNamespaceHandler: XML_EndNamespaceDeclHandler = { userData, prefix in
        let state = userData!.assumingMemoryBound(to: ParserState.self)
        guard state.pointee.pendingError == nil else { return }
        ParserState.dropBinding(state, prefix: prefix)
        if ParserState.isInjectedDeclaration(state, prefix: XMLBytes(cString: prefix), starting: false) { return }
        ParserState.flushText(state)
        state.pointee.handlerBox._withUnsafeGuaranteedRef { $0.handler.endPrefixMapping(prefix: XMLBytes(cString: prefix)) }
    }

    /// While a restarted parser reads the replayed open elements: their names and depths are kept, nothing is reported.
    private static let replayStartElementHandler: XML_StartElementHandler = { userData, name, _ in
        let state = userData!.assumingMemoryBound(to: ParserState.self)
        state.pointee.depth += 1
        let index = state.pointee.depth - 1
        if index >= state.pointee.openNamesCapacity { ParserState.growOpenNames(state) }
        (state.pointee.openNames + index).initialize(to: XMLName(expatName: name!, separator: state.pointee.separator))
    }

    private static let replayStartNamespaceHandler: XML_StartNamespaceDeclHandler = { userData, prefix, uri in
        ParserState.noteBinding(userData!.assumingMemoryBound(to: ParserState.self), prefix: prefix, uri: uri)
    }

    /// How many invalid or truncated byte sequences of a transcoded charset became U+FFFD.
    public var encodingReplacements: Int { transcoder?.replacements ?? 0 }

    /// What was repaired so far; always empty unless ``ExpatXMLConfiguration/repairsMalformedInput`` is on.
    public var repairs: XMLRepairs {
        var repairs = repairFilter?.repairs ?? XMLRepairs()
        repairs.leadingWhitespace = leadingWhitespaceRepairs
        repairs.undeclaredPrefixes = state.pointee.usedInjectedPrefixes.nonzeroBitCount + recoveredPrefixes.count
        return repairs
    }

    /// How many references to external entities were refused (never loaded).
    public var refusedExternalEntities: Int { state.pointee.refusedExternalEntities }

    // MARK: Internals

    private func sniff(isComplete: Bool) throws(ExpatXMLError) {
        let outcome = prolog.withUnsafeBytes {
            EncodingSniffer.sniff($0, hint: configuration.charsetHint, isComplete: isComplete,
                                  maximumDeclarationBytes: configuration.maximumDeclarationBytes)
        }
        switch outcome {
        case .needMoreBytes:
            return
        case .unsupported(let label, let source):
            let failure = error(.unsupportedEncoding,
                                "unsupported encoding '\(label)' (from the \(source == .charsetHint ? "charset hint" : "XML declaration"))")
            phase = .failed(failure)
            throw failure
        case .decided(let encoding, var decoder):
            self.encoding = encoding
            if configuration.correctsMislabelledEncoding, let encoding,
               encoding.source == .charsetHint || encoding.source == .declaration {
                switch decoder {
                case .singleByte(let iconvName):
                    // UTF-8 to expat until the bytes decide: ASCII reads the same either way, and from the first byte above
                    // 0x7F on either nothing (UTF-8) or iconv (the label) is in front of it.
                    labelCheck = .singleByte(iconvName: iconvName)
                    decoder = .native(expatName: "UTF-8")
                case .native where encoding.name == "UTF-8":
                    labelCheck = .utf8
                default:
                    break
                }
            }
            switch decoder {
            case .native(let expatName):
                if let expatName { try setEncoding(expatName) } else if encoding?.name == "UTF-8" { protocolEncoding = "UTF-8" }
            case .singleByte:
                try setEncoding(encoding?.name ?? "")
            case .transcoded(let iconvName):
                guard let transcoder = IconvTranscoder(from: iconvName) else {
                    let failure = error(.unsupportedEncoding, "unsupported encoding '\(encoding?.label ?? iconvName)'")
                    phase = .failed(failure)
                    throw failure
                }
                self.transcoder = transcoder
                try setEncoding("UTF-8")
            }
            if case .native(let expatName) = decoder, expatName?.hasPrefix("UTF-16") == true || encoding?.name.hasPrefix("UTF-16") == true {
                refusesNUL = false
            }
            if configuration.repairsMalformedInput {
                let isUTF16: Bool
                if case .native(let expatName) = decoder {
                    isUTF16 = expatName?.hasPrefix("UTF-16") == true || encoding?.name.hasPrefix("UTF-16") == true
                } else {
                    isUTF16 = false
                }
                if !isUTF16 {
                    // iconv's output is valid UTF-8 already; single-byte charsets have no invalid bytes to find.
                    let filter = InputRepairFilter(validatesUTF8: transcoder == nil && encoding?.name == "UTF-8",
                                                   declaresWellKnownPrefixes: configuration.processesNamespaces)
                    repairFilter = filter
                    state.pointee.repairFilter = Unmanaged.passUnretained(filter)
                }
            }
            if (configuration.detectsUndeclaredEncoding && encoding?.source == .defaulted) || labelCheck != nil { undetected = [] }
            phase = .parsing
            handler.startDocument()
            if case .failed(let failure) = phase { throw failure }  // the handler aborted in startDocument
            let bytes = prolog
            prolog = []
            var failure: ExpatXMLError?
            bytes.withUnsafeBytes { buffer in
                do throws(ExpatXMLError) { try feed(buffer, isFinal: false) } catch { failure = error }
            }
            if let failure { throw failure }
        }
    }

    private func feed(_ bytes: UnsafeRawBufferPointer, isFinal: Bool) throws(ExpatXMLError) {
        if undetected != nil {
            try detectThenFeed(bytes, isFinal: isFinal)
        } else {
            try decodeAndFeed(bytes, isFinal: isFinal)
        }
    }

    // MARK: Undeclared encodings

    /// How many well-formed multi-byte UTF-8 sequences, from the first byte above 0x7F on, make an undeclared document
    /// UTF-8: one can be an accident of a legacy encoding (GBK's `CD B6` is also UTF-8's `Ͷ`), four in a row hardly.
    static let utf8ConfirmationSequences = 4
    /// How far past the first byte above 0x7F the parser looks for those sequences before it settles for UTF-8 anyway
    /// (English text with one curly quote): the most it holds back from a document that turns out to be UTF-8.
    static let utf8ConfirmationBytes = 4096

    /// An undeclared document's bytes while its encoding is open: ASCII goes on as UTF-8; from the first byte above 0x7F
    /// the bytes are held until they decide (see ``ExpatXMLConfiguration/detectsUndeclaredEncoding``). What is decided
    /// depends only on the bytes from that first byte on, never on how they were split.
    private func detectThenFeed(_ input: UnsafeRawBufferPointer, isFinal: Bool) throws(ExpatXMLError) {
        if undetected!.isEmpty {
            let first = Self.firstNonASCII(in: input)
            if labelCheck != nil, asciiBytesBeforeCheck + Int64(first ?? input.count) >= Self.labelCheckASCIIBytes {
                // A labelled document whose first byte above 0x7F comes this late keeps its label, and is not scanned on.
                undetected = nil
                return try decodeAndFeed(input, isFinal: isFinal)
            }
            guard let first else {
                asciiBytesBeforeCheck += Int64(input.count)
                return try decodeAndFeed(input, isFinal: isFinal)
            }
            if first > 0 { try decodeAndFeed(UnsafeRawBufferPointer(rebasing: input[..<first]), isFinal: false) }
            undetected = Array(UnsafeRawBufferPointer(rebasing: input[first...]))
        } else {
            undetected!.append(contentsOf: input)
        }
        guard let held = undetected else { return }
        if let labelCheck { return try checkLabel(labelCheck, held: held, isFinal: isFinal) }
        if !collectingForDetection {
            // Walk the held bytes' multi-byte sequences from where the last chunk stopped.
            var index = detectionScanned
            var decidedUTF8 = false
            held.withUnsafeBytes { bytes in
                while index < bytes.count {
                    if utf8Sequences >= Self.utf8ConfirmationSequences || index >= Self.utf8ConfirmationBytes {
                        decidedUTF8 = true
                        return
                    }
                    if bytes[index] < 0x80 {
                        index += 1
                        continue
                    }
                    switch Self.utf8Sequence(UnsafeRawBufferPointer(rebasing: bytes[index...])) {
                    case .valid(let length):
                        utf8Sequences += 1
                        index += length
                    case .incomplete where !isFinal:
                        return  // wait for the rest of it
                    case .incomplete, .invalid:
                        collectingForDetection = true
                        return
                    }
                }
                // Every byte so far was UTF-8: at the document's end, or once enough is seen, that settles it.
                decidedUTF8 = isFinal || utf8Sequences >= Self.utf8ConfirmationSequences || index >= Self.utf8ConfirmationBytes
            }
            detectionScanned = index
            if !decidedUTF8 && !collectingForDetection { return }
        }
        // Not UTF-8: libuchardet looks at the first `encodingDetectionBytes` bytes from the first byte above 0x7F.
        let sampleLength = max(1, configuration.encodingDetectionBytes)
        if collectingForDetection && held.count < sampleLength && !isFinal { return }
        var failure: ExpatXMLError?
        held.withUnsafeBytes { bytes in
            do throws(ExpatXMLError) {
                if collectingForDetection {
                    try switchToDetectedEncoding(sample: UnsafeRawBufferPointer(rebasing: bytes.prefix(sampleLength)))
                } else {
                    undetected = nil  // UTF-8
                }
                try decodeAndFeed(bytes, isFinal: isFinal)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// How far into a labelled document its first byte above 0x7F must come for its bytes to be checked against its
    /// label: a first MiB of ASCII says nothing against either, and a document is not scanned to its end for a check.
    static let labelCheckASCIIBytes: Int64 = 1 << 20

    /// How many characters from the first byte above 0x7F decide whether a document labelled UTF-8 is: each a well-formed
    /// multi-byte UTF-8 sequence or a byte that begins none. More of the latter than the former (within these, or within
    /// ``utf8ConfirmationBytes``) and the document is read as windows-1252.
    static let labelCheckCharacters = 16

    /// A labelled document's bytes while they are checked against its label (``ExpatXMLConfiguration/correctsMislabelledEncoding``).
    ///
    /// From the first byte above 0x7F, when it comes within the first ``labelCheckASCIIBytes`` bytes, the parser walks
    /// at most ``utf8ConfirmationBytes`` bytes:
    /// - labelled with a single-byte charset: the first byte that begins no well-formed UTF-8 sequence keeps the label;
    ///   ``utf8ConfirmationSequences`` sequences, or the end of the window or of the document with every sequence
    ///   well-formed, make it UTF-8;
    /// - labelled UTF-8: of the first ``labelCheckCharacters`` characters above 0x7F (or those in the window, or in the
    ///   document), more bytes that begin no well-formed sequence than well-formed sequences make it windows-1252.
    /// What is decided depends only on the bytes from that first byte on, never on how they were split.
    private func checkLabel(_ check: LabelCheck, held: [UInt8], isFinal: Bool) throws(ExpatXMLError) {
        enum Verdict { case label, utf8, windows1252 }
        var index = detectionScanned
        var verdict: Verdict?
        held.withUnsafeBytes { bytes in
            func settled() -> Verdict? {
                switch check {
                case .singleByte:
                    if invalidUTF8Bytes > 0 { return .label }
                    if utf8Sequences >= Self.utf8ConfirmationSequences { return .utf8 }
                case .utf8:
                    if invalidUTF8Bytes * 2 > Self.labelCheckCharacters { return .windows1252 }
                    if utf8Sequences * 2 >= Self.labelCheckCharacters { return .label }
                }
                return nil
            }
            while index < bytes.count {
                if let early = settled() { verdict = early; return }
                if index >= Self.utf8ConfirmationBytes { break }
                if bytes[index] < 0x80 {
                    index += 1
                    continue
                }
                switch Self.utf8Sequence(UnsafeRawBufferPointer(rebasing: bytes[index...])) {
                case .valid(let length):
                    utf8Sequences += 1
                    index += length
                case .incomplete where !isFinal:
                    return  // wait for the rest of it
                case .incomplete, .invalid:
                    invalidUTF8Bytes += 1
                    index += 1
                }
            }
            if let early = settled() { verdict = early; return }
            // The window, or the document, ended undecided: what was seen decides.
            guard isFinal || index >= Self.utf8ConfirmationBytes else { return }
            switch check {
            case .singleByte: verdict = .utf8  // every sequence seen was well-formed UTF-8
            case .utf8: verdict = invalidUTF8Bytes > utf8Sequences ? .windows1252 : .label
            }
        }
        detectionScanned = index
        guard let verdict else { return }
        let labelled = encoding
        switch (check, verdict) {
        case (.singleByte(let iconvName), .label):
            try useTranscoder(iconvName, label: labelled?.label ?? iconvName)
        case (.singleByte, .utf8):
            encoding = DocumentEncoding(name: "UTF-8", label: labelled?.label, source: .corrected, labelSource: labelled?.source)
            repairFilter?.validatesUTF8 = true
        case (.utf8, .windows1252):
            try useTranscoder("CP1252", label: "windows-1252")
            encoding = DocumentEncoding(name: "windows-1252", label: labelled?.label, source: .corrected, labelSource: labelled?.source)
            repairFilter?.validatesUTF8 = false
        case (.utf8, _), (.singleByte, .windows1252):
            break
        }
        undetected = nil
        var failure: ExpatXMLError?
        held.withUnsafeBytes { bytes in
            do throws(ExpatXMLError) { try decodeAndFeed(bytes, isFinal: isFinal) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Puts iconv, decoding `iconvName`, in front of expat (which reads UTF-8) for the rest of the document.
    private func useTranscoder(_ iconvName: String, label: String) throws(ExpatXMLError) {
        guard let transcoder = IconvTranscoder(from: iconvName) else {
            let failure = error(.unsupportedEncoding, "unsupported encoding '\(label)'")
            phase = .failed(failure)
            throw failure
        }
        self.transcoder = transcoder
    }

    /// Asks libuchardet what `sample` is and decodes the rest of the document from it with iconv.
    private func switchToDetectedEncoding(sample: UnsafeRawBufferPointer) throws(ExpatXMLError) {
        undetected = nil
        let answer: String?
        do {
            answer = try Uchardet.detect(sample)
        } catch {
            let failure = self.error(error.code, error.message)
            phase = .failed(failure)
            throw failure
        }
        // uchardet may answer UTF-8 or ASCII for bytes that are neither, or nothing: then windows-1252, the last resort.
        var source = DocumentEncoding.Source.detected
        var resolved = answer.flatMap(EncodingLabel.resolve)
        var iconvName: String?
        switch resolved?.decoder {
        case .singleByte(let name)?, .transcoded(let name)?: iconvName = name
        case .native?, nil: iconvName = nil
        }
        if iconvName == nil || answer?.uppercased() == "ASCII" {
            source = .fallback
            resolved = EncodingLabel.resolve("windows-1252")
            iconvName = "CP1252"
        }
        guard let resolved, let iconvName, let transcoder = IconvTranscoder(from: iconvName) else {
            let failure = error(.unsupportedEncoding, "unsupported encoding '\(answer ?? "windows-1252")' (named by libuchardet)")
            phase = .failed(failure)
            throw failure
        }
        self.transcoder = transcoder
        encoding = DocumentEncoding(name: resolved.canonicalName, label: answer, source: source)
    }

    /// The index of the first byte above 0x7F, 16 bytes a step (``feedingest_bytescan_high``, CByteScan).
    private static func firstNonASCII(in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let index = feedingest_bytescan_high(base, 0, bytes.count)
        return index < bytes.count ? index : nil
    }

    /// The well-formed UTF-8 sequence the bytes start with, or why not.
    private static func utf8Sequence(_ bytes: UnsafeRawBufferPointer) -> UTF8Sequence {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else { return .incomplete }
        return UTF8Sequence.check(at: 0, in: base, count: bytes.count)
    }

    // MARK: Decoding

    private func decodeAndFeed(_ bytes: UnsafeRawBufferPointer, isFinal: Bool) throws(ExpatXMLError) {
        if let transcoder {
            try transcoder.convert(bytes, isFinal: isFinal) { (utf8) throws(ExpatXMLError) in try repairAndFeed(utf8, isFinal: false) }
            if isFinal { try repairAndFeed(UnsafeRawBufferPointer(start: nil, count: 0), isFinal: true) }
        } else {
            try repairAndFeed(bytes, isFinal: isFinal)
        }
    }

    private func repairAndFeed(_ bytes: UnsafeRawBufferPointer, isFinal: Bool) throws(ExpatXMLError) {
        if let repairFilter {
            try repairFilter.process(bytes, isFinal: isFinal) { (piece) throws(ExpatXMLError) in try feedExpat(piece, isFinal: false) }
            if isFinal { try feedExpat(UnsafeRawBufferPointer(start: nil, count: 0), isFinal: true) }
        } else {
            try feedExpat(bytes, isFinal: isFinal)
        }
    }

    /// Drops white space in front of the document (after a UTF-8 byte-order mark), which makes expat reject an
    /// XML declaration. Two white-space bytes in a row cannot be UTF-16, so such a run is dropped as it arrives,
    /// however long and whatever follows; a single byte is dropped only when a `<` that is not UTF-16's follows.
    /// Returns whether it waits for more bytes before the encoding can be sniffed. The result depends only on
    /// the bytes, never on how they were split; positions in errors count the dropped bytes back in.
    private func stripLeadingWhitespace(isComplete: Bool) -> Bool {
        if !isComplete && prolog.count < 3 && [0xEF, 0xBB, 0xBF].starts(with: prolog) { return true }
        let start = prolog.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        if start == prolog.count && !isComplete { return true }
        var end = start
        while end < prolog.count, [0x20, 0x09, 0x0A, 0x0D].contains(prolog[end]) { end += 1 }
        let run = end - start
        if run >= 2 || (run == 1 && strippedLeadingWhitespace) || (run > 0 && isComplete && end == prolog.count) {
            drop(start..<end)
            if end == prolog.count + run && !isComplete { return true }  // only white space so far
        } else if run == 1 {
            guard end < prolog.count else { return !isComplete }
            if prolog[end] == 0x3C {
                guard end + 1 < prolog.count || isComplete else { return true }  // the byte after '<' tells UTF-16
                if end + 1 >= prolog.count || prolog[end + 1] != 0 { drop(start..<end) }
            }
        }
        guard strippedLeadingWhitespace, !leadingWhitespaceDecided else { return false }
        // White space before a root element is legal; before the XML declaration expat rejects it: a repair.
        if prolog.count - start < 5 && !isComplete { return true }
        if prolog[start...].starts(with: Array("<?xml".utf8)) { leadingWhitespaceRepairs = 1 }
        leadingWhitespaceDecided = true
        return false
    }

    /// Removes leading white space from the prolog, remembering it for error positions.
    private func drop(_ range: Range<Int>) {
        for byte in prolog[range] {
            if byte == 0x0A {
                stripped.newlines += 1
                stripped.lastLineColumns = 0
            } else {
                stripped.lastLineColumns += 1
            }
        }
        stripped.bytes += Int64(range.count)
        prolog.removeSubrange(range)
        strippedLeadingWhitespace = true
    }

    // MARK: Unbound prefixes

    /// The URI a prefix used without any declaration is bound to, when it is not a well-known one.
    static let undeclaredPrefixNamespace = "urn:x-feedingest:undeclared-prefix:"
    /// The most prefixes restarts bind in one document: each restart replays every binding so far, so a hostile document
    /// of ever new prefixes would cost quadratic time; past these, an unbound prefix is an error again.
    static let maximumRecoveredPrefixes = 64

    /// Recovers from expat's "unbound prefix" (a prefix used where no declaration binds it, and not one the repair
    /// filter declared on the root): binds each such prefix of the failing start tag (to its usual URI when it is
    /// well-known, else to ``undeclaredPrefixNamespace`` and the prefix), and restarts expat where it failed.
    ///
    /// expat cannot go on after an error, so it is reset and reads first the open elements again (each with the
    /// declarations in scope where it opened, the new ones on the outermost), which reach no handler, then the rest of
    /// its input from the failing tag (`XML_GetInputContext`: expat keeps what it has not parsed). The failing tag is
    /// then read again and reported; positions are mapped back (``ExpatRestart``). A clean document never comes here.
    /// Returns the bytes to give the restarted parser, or `nil` when it cannot be restarted (the error then stands):
    /// repairs off, namespaces off, UTF-16 or an encoding expat read from the declaration itself, the same tag again, or
    /// ``maximumRecoveredPrefixes`` bound already.
    private func restartAfterUnboundPrefix() -> [UInt8]? {
        guard configuration.repairsMalformedInput, configuration.processesNamespaces, let protocolEncoding,
              !protocolEncoding.hasPrefix("UTF-16"), recoveredPrefixes.count < Self.maximumRecoveredPrefixes else { return nil }
        var contextOffset: Int32 = 0
        var contextSize: Int32 = 0
        guard let context = XML_GetInputContext(expat, &contextOffset, &contextSize), contextOffset >= 0, contextOffset < contextSize
        else { return nil }
        var rest = Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(context) + Int(contextOffset), count: Int(contextSize - contextOffset)))
        let raw = (line: Int(XML_GetCurrentLineNumber(expat)), column: Int(XML_GetCurrentColumnNumber(expat)), offset: rawByteOffset)
        let position = restart?.translate(line: raw.line, column: raw.column, offset: raw.offset) ?? raw
        if let restart, restart.offset == position.offset { return nil }  // the restart did not bind what failed
        let bindings = state.pointee.bindings
        guard let tag = UnboundPrefixes.scan(rest, bound: bindings.map(\.prefix)), !tag.unbound.isEmpty else { return nil }

        // The declarations that bind them, and the open elements' names, copied before the reset frees expat's memory.
        var declarations: [UInt8] = []
        for prefix in tag.unbound {
            let known = InputRepairFilter.wellKnownNamespaces.first { Array($0.prefix.utf8) == prefix }?.uri
            let uri = known.map { Array($0.utf8) } ?? Array(Self.undeclaredPrefixNamespace.utf8) + prefix
            UnboundPrefixes.appendDeclaration(prefix: prefix, uri: uri, to: &declarations)
            if !recoveredPrefixes.contains(prefix) { recoveredPrefixes.append(prefix) }
            if !state.pointee.restartPrefixes.contains(prefix) { state.pointee.restartPrefixes.append(prefix) }
        }
        var prolog: [UInt8] = []
        let depth = state.pointee.depth
        for index in 0..<depth {
            let name = state.pointee.openNames[index]
            prolog.append(0x3C)  // <
            if !name.prefix.isEmpty { prolog += Array(name.prefix.buffer) + [0x3A] }
            prolog += Array(name.localName.buffer)
            for binding in bindings where binding.depth == index + 1 {
                UnboundPrefixes.appendDeclaration(prefix: binding.prefix, uri: binding.uri, to: &prolog)
            }
            // The bindings in scope name each open element as expat did; should one not, its own binding is declared.
            let inScope = bindings.last { $0.depth <= index + 1 && $0.prefix.elementsEqual(name.prefix.buffer) }?.uri ?? []
            if !inScope.elementsEqual(name.namespaceURI.buffer) {
                UnboundPrefixes.appendDeclaration(prefix: Array(name.prefix.buffer), uri: Array(name.namespaceURI.buffer), to: &prolog)
            }
            if index == 0 { prolog += declarations }
            prolog.append(0x3E)  // >
        }
        // Without open elements the failing tag is the root: the declarations go into it, after its name.
        var insertion: (at: Int, length: Int)?
        if depth == 0 {
            rest.insert(contentsOf: declarations, at: tag.nameEnd)
            insertion = (tag.nameEnd, declarations.count)
        }

        guard XML_ParserReset(expat, protocolEncoding) == XML_TRUE else { return nil }
        state.pointee.depth = 0
        state.pointee.bindings = []
        do throws(ExpatXMLError) { try installHandlers() } catch { return nil }
        XML_SetElementHandler(expat, Self.replayStartElementHandler, nil)
        XML_SetNamespaceDeclHandler(expat, Self.replayStartNamespaceHandler, nil)
        state.pointee.insideExpat = true
        let replayed = prolog.withUnsafeBytes { XML_Parse(expat, $0.baseAddress?.assumingMemoryBound(to: CChar.self), Int32($0.count), 0) }
        state.pointee.insideExpat = false
        guard replayed == XML_STATUS_OK, state.pointee.depth == depth else { return nil }
        XML_SetElementHandler(expat, Self.startElementHandler, Self.endElementHandler)
        XML_SetNamespaceDeclHandler(expat, Self.startNamespaceHandler, Self.endNamespaceHandler)
        if !state.pointee.collectingText && !state.pointee.separateCDATA { XML_SetCharacterDataHandler(expat, nil) }
        restart = ExpatRestart(line: position.line, column: position.column, offset: position.offset, prologLength: prolog.count,
                               insertion: insertion)
        return rest
    }

    private func feedExpat(_ bytes: UnsafeRawBufferPointer, isFinal: Bool) throws(ExpatXMLError) {
        if bytes.isEmpty && !isFinal { return }
        // A NUL byte (U+0000) is never allowed in XML, but which error libexpat reports for it, and where, depends on
        // the bytes around it and so on how the document was split (fuzzing found "\n" + "\0…" reported as an invalid
        // token at byte 1, and "\n\0…" whole as a syntax error at byte 2). So expat never sees one: the bytes before
        // it are parsed, and the NUL is reported here, where expat stopped. UTF-16 (which expat decodes itself) has
        // zero bytes in every ASCII character and is left to expat.
        if refusesNUL, let base = bytes.baseAddress, let nul = memchr(base, 0, bytes.count) {
            let prefix = UnsafeRawBufferPointer(start: base, count: UnsafeRawPointer(nul) - UnsafeRawPointer(base))
            try feedExpat(prefix, isFinal: false)
            let failure = error(.invalidToken, "not well-formed (invalid token): a NUL byte, which XML does not allow")
            phase = .failed(failure)
            throw failure
        }
        // XML_Parse takes an int length: feed huge buffers in pieces of at most 1 GiB.
        var offset = 0
        repeat {
            let length = min(bytes.count - offset, 1 << 30)
            let last = isFinal && offset + length == bytes.count
            let base = bytes.baseAddress.map { ($0 + offset).assumingMemoryBound(to: CChar.self) }
            state.pointee.insideExpat = true
            let status = XML_Parse(expat, base, Int32(length), last ? 1 : 0)
            state.pointee.insideExpat = false
            // A callback's error counts even if XML_StopParser could not stop expat and the call returned OK.
            if status != XML_STATUS_OK || state.pointee.pendingError != nil {
                var failure: ExpatXMLError
                if let pending = state.pointee.pendingError {
                    failure = makeError(pending)
                } else {
                    let code = XML_GetErrorCode(expat)
                    let message = XML_ErrorString(code).map { String(cString: $0) } ?? "expat error \(code.rawValue)"
                    if code == XML_ERROR_UNKNOWN_ENCODING, let name = state.pointee.unknownEncodingName {
                        failure = error(.unsupportedEncoding, "unsupported encoding '\(name)'"
                            + (EncodingLabel.resolve(name) != nil ? " this far into the document (declare it within the first \(configuration.maximumDeclarationBytes) bytes)" : ""))
                    } else {
                        failure = error(ExpatXMLError.Code(rawValue: Int32(code.rawValue)), message)
                    }
                }
                // The error is made before a restart is tried: it resets expat, and the error stands if the restart fails.
                if state.pointee.pendingError == nil, XML_GetErrorCode(expat) == XML_ERROR_UNBOUND_PREFIX,
                   let rest = restartAfterUnboundPrefix() {
                    // The restarted parser reads the rest of what expat was given, from the tag that failed.
                    var restFailure: ExpatXMLError?
                    rest.withUnsafeBytes { rest in
                        do throws(ExpatXMLError) { try feedExpat(rest, isFinal: last) } catch { restFailure = error }
                    }
                    guard let restFailure else {
                        offset += length
                        continue
                    }
                    failure = restFailure
                }
                phase = .failed(failure)
                throw failure
            }
            offset += length
        } while offset < bytes.count
    }

    /// Checks the result of a libexpat call that sets the parser up (`XML_ParserCreate`, the setters that return a
    /// status, `XML_SetEncoding`); `message` says what failed, `function` is named in it when `message` is `nil`.
    private func check(_ succeeded: Bool, _ function: String, _ message: String? = nil,
                       code: ExpatXMLError.Code = .setupFailed) throws(ExpatXMLError) {
        guard !succeeded else { return }
        throw ExpatXMLError(code: code, message: message ?? "libexpat refused \(function)", source: source)
    }

    /// `XML_SetEncoding`, before the first bytes reach expat (it fails once parsing has started, or out of memory).
    private func setEncoding(_ name: String) throws(ExpatXMLError) {
        protocolEncoding = name
        do {
            try check(XML_SetEncoding(expat, name) == XML_STATUS_OK, "XML_SetEncoding(\"\(name)\")")
        } catch {
            phase = .failed(error)
            throw error
        }
    }

    private func error(_ code: ExpatXMLError.Code, _ message: String) -> ExpatXMLError {
        let position = currentPosition
        return ExpatXMLError(code: code, message: message, line: position.line, column: position.column, byteOffset: position.offset,
                             source: source)
    }

    private func makeError(_ pending: PendingError) -> ExpatXMLError {
        let position = corrected(line: pending.line, column: pending.column, offset: pending.byteOffset)
        return ExpatXMLError(code: pending.code, message: pending.message, line: position.line, column: position.column,
                             byteOffset: position.offset, source: source)
    }

    private func installHandlers() throws(ExpatXMLError) {
        let userData = UnsafeMutableRawPointer(state)
        XML_SetUserData(expat, userData)
        if configuration.processesNamespaces { XML_SetReturnNSTriplet(expat, 1) }
        // Never load anything from outside the document (expat.h: XML_SetParamEntityParsing; 1 is success).
        try check(XML_SetParamEntityParsing(expat, XML_PARAM_ENTITY_PARSING_NEVER) == 1, "XML_SetParamEntityParsing(NEVER)")
        // expat.h: false for a factor below 1 or not a number (and for a NULL or non-root parser).
        let amplification = configuration.maximumAmplification
        try check(XML_SetBillionLaughsAttackProtectionMaximumAmplification(expat, amplification) != 0,
                  "XML_SetBillionLaughsAttackProtectionMaximumAmplification",
                  "libexpat refused the amplification limit \(amplification): it must be a number of at least 1 (ExpatXMLConfiguration.maximumAmplification)")
        try check(XML_SetBillionLaughsAttackProtectionActivationThreshold(expat, configuration.amplificationActivationThreshold) != 0,
                  "XML_SetBillionLaughsAttackProtectionActivationThreshold")

        XML_SetElementHandler(expat, Self.startElementHandler, Self.endElementHandler)
        XML_SetCharacterDataHandler(expat, Self.characterDataHandler)
        XML_SetCommentHandler(expat, { userData, text in
            let state = userData!.assumingMemoryBound(to: ParserState.self)
            guard state.pointee.pendingError == nil else { return }
            ParserState.flushText(state)
            state.pointee.handlerBox._withUnsafeGuaranteedRef { $0.handler.comment(XMLBytes(cString: text!)) }
        })
        XML_SetProcessingInstructionHandler(expat, { userData, target, data in
            let state = userData!.assumingMemoryBound(to: ParserState.self)
            guard state.pointee.pendingError == nil else { return }
            ParserState.flushText(state)
            state.pointee.handlerBox._withUnsafeGuaranteedRef { $0.handler.processingInstruction(target: XMLBytes(cString: target!), data: XMLBytes(cString: data!)) }
        })
        // expat.h: XML_SetStartDoctypeDeclHandler; the identifiers are NULL when absent.
        XML_SetStartDoctypeDeclHandler(expat, { userData, name, systemID, publicID, _ in
            let state = userData!.assumingMemoryBound(to: ParserState.self)
            guard state.pointee.pendingError == nil else { return }
            ParserState.flushText(state)
            state.pointee.handlerBox._withUnsafeGuaranteedRef { $0.handler.startDoctype(name: XMLBytes(cString: name), systemID: XMLBytes(cString: systemID),
                                               publicID: XMLBytes(cString: publicID)) }
        })
        if configuration.cdataHandling == .separate {
            XML_SetCdataSectionHandler(expat, { userData in
                let state = userData!.assumingMemoryBound(to: ParserState.self)
                guard state.pointee.pendingError == nil else { return }
                ParserState.flushText(state)
                state.pointee.inCDATA = true
            }, { userData in
                let state = userData!.assumingMemoryBound(to: ParserState.self)
                guard state.pointee.pendingError == nil else { return }
                state.pointee.inCDATA = false
                if state.pointee.textOverflow { return ParserState.failTextTooLarge(state) }
                let text = state.pointee.text
                let count = state.pointee.textCount
                state.pointee.textCount = 0
                state.pointee.handlerBox._withUnsafeGuaranteedRef { $0.handler.cdata(XMLBytes(UnsafeBufferPointer(start: text, count: count))) }
            })
        }
        if configuration.processesNamespaces {
            XML_SetNamespaceDeclHandler(expat, Self.startNamespaceHandler, Self.endNamespaceHandler)
        }
        // Refuse every external entity: count it and go on without loading anything.
        XML_SetExternalEntityRefHandlerArg(expat, userData)  // the handler's first argument is then our state
        XML_SetExternalEntityRefHandler(expat, { argument, _, _, _, _ in
            let state = UnsafeMutableRawPointer(argument!).assumingMemoryBound(to: ParserState.self)
            state.pointee.refusedExternalEntities += 1
            return Int32(XML_STATUS_OK.rawValue)
        })
        XML_SetUnknownEncodingHandler(expat, { userData, name, info in
            let state = userData!.assumingMemoryBound(to: ParserState.self)
            let label = name.map { String(cString: $0) } ?? ""
            state.pointee.unknownEncodingName = label
            guard let resolved = EncodingLabel.resolve(label), case .singleByte(let iconvName) = resolved.decoder,
                  let table = Iconv.singleByteTable(for: iconvName), let info else {
                return Int32(XML_STATUS_ERROR.rawValue)
            }
            withUnsafeMutableBytes(of: &info.pointee.map) { map in
                let entries = map.bindMemory(to: Int32.self)
                for index in 0..<256 { entries[index] = table[index] }
            }
            info.pointee.data = nil
            info.pointee.convert = nil
            info.pointee.release = nil
            return Int32(XML_STATUS_OK.rawValue)
        }, userData)
    }
}

@available(*, unavailable, message: "a parser is confined to one thread")
extension XMLPushParser: Sendable {}

/// An error found inside a callback, kept until the C call returns (never thrown across C).
struct PendingError {
    var code: ExpatXMLError.Code
    var message: String
    var line: Int
    var column: Int
    var byteOffset: Int64
}

/// Everything the C callbacks touch, in one struct behind a pointer: no class property, no exclusivity check.
/// The parser's handler in a final class, so the C callbacks can borrow it: calling through an `unowned(unsafe)`
/// existential retained and released the handler on every event (issue 18: ~27 M instructions of `feedingest parse`).
final class HandlerBox {
    let handler: any XMLEventHandler
    init(_ handler: any XMLEventHandler) { self.handler = handler }
}

struct ParserState {
    let expat: XML_Parser?
    /// The handler, reached without a reference count per event (`handlerBox._withUnsafeGuaranteedRef { $0.handler… }`);
    /// the parser holds the box.
    let handlerBox: Unmanaged<HandlerBox>
    let separator: UInt8
    let maximumDepth: Int
    let maximumTextBytes: Int
    let separateCDATA: Bool
    var text: UnsafeMutablePointer<UInt8>
    var textCount = 0
    var textCapacity: Int
    /// The split name of each open element, by depth (index `depth - 1`), so its end tag need not be split again:
    /// expat hands the end tag the same name storage as the start tag (checked by address, else split anew).
    var openNames: UnsafeMutablePointer<XMLName>
    var openNamesCapacity = 64
    var depth = 0
    var collectingText = true
    var inCDATA = false
    var textOverflow = false
    var insideExpat = false
    var refusedExternalEntities = 0
    var unknownEncodingName: String?
    /// The repair filter, when on, for the namespace declarations it added to the root.
    /// The parser's repair filter, which outlives this state; unmanaged so that reaching it from a callback is no
    /// reference count (an `unowned(unsafe)` reference was loaded strong: a retain and a release per start tag).
    var repairFilter: Unmanaged<InputRepairFilter>?
    /// Per added prefix (by index), how many declarations of the document's own are in scope.
    var redeclaredInjected: [Int] = []
    /// Bit k set: the k-th added prefix was used where only the added declaration bound it.
    var usedInjectedPrefixes: UInt64 = 0
    /// The namespace declarations in scope, innermost last, with the depth of the element that makes each (the
    /// document's and the repair filter's): what a restart after an unbound prefix declares again.
    var bindings: [(depth: Int, prefix: [UInt8], uri: [UInt8])] = []
    /// The prefixes restarts bound on the root (see ``bindings``): their declarations are not the document's.
    var restartPrefixes: [[UInt8]] = []
    var pendingError: PendingError?

    init(expat: XML_Parser?, handler: HandlerBox, separator: UInt8, maximumDepth: Int, maximumTextBytes: Int,
         separateCDATA: Bool) {
        self.expat = expat
        handlerBox = .passUnretained(handler)
        self.separator = separator
        self.maximumDepth = maximumDepth
        self.maximumTextBytes = maximumTextBytes
        self.separateCDATA = separateCDATA
        // Never above the limit (none at all for a limit below 1): `characters` takes room in the buffer as being
        // within it.
        textCapacity = min(4096, max(maximumTextBytes, 0))
        text = .allocate(capacity: max(textCapacity, 1))
        openNames = .allocate(capacity: openNamesCapacity)
    }

    /// Delivers the collected text node, if any, unless inside a separate CDATA section. A node that
    /// outgrew the limit fails here, where it ends: a position that does not depend on chunking, as the
    /// place inside the node where the limit was crossed would.
    @inline(__always) static func flushText(_ state: UnsafeMutablePointer<ParserState>) {
        guard state.pointee.textCount > 0, !state.pointee.inCDATA, state.pointee.pendingError == nil else { return }
        if state.pointee.textOverflow { return failTextTooLarge(state) }
        let count = state.pointee.textCount
        state.pointee.textCount = 0
        state.pointee.handlerBox._withUnsafeGuaranteedRef { $0.handler.text(XMLBytes(UnsafeBufferPointer(start: state.pointee.text, count: count))) }
    }

    static func failTextTooLarge(_ state: UnsafeMutablePointer<ParserState>) {
        fail(state, code: .textNodeTooLarge,
             message: "a text node longer than the limit of \(state.pointee.maximumTextBytes) bytes ends here")
    }

    static func startElement(_ state: UnsafeMutablePointer<ParserState>, _ name: UnsafePointer<CChar>,
                             _ attributes: UnsafeMutablePointer<UnsafePointer<CChar>?>?) {
        guard state.pointee.pendingError == nil else { return }
        ParserState.flushText(state)
        state.pointee.depth += 1
        let separator = state.pointee.separator
        let split = XMLName(expatName: name, separator: separator)
        // Most elements have neither a prefix nor attributes: nothing to note, and no call.
        if let filter = state.pointee.repairFilter, !split.prefix.isEmpty || attributes?.pointee != nil,
           filter._withUnsafeGuaranteedRef({ !$0.injectedPrefixes.isEmpty }) {
            filter._withUnsafeGuaranteedRef { noteUndeclaredPrefixes(state, $0, split, attributes) }
        }
        if state.pointee.depth > state.pointee.maximumDepth {
            fail(state, code: .depthLimitExceeded,
                 message: "elements nested deeper than the limit of \(state.pointee.maximumDepth)")
            return
        }
        let index = state.pointee.depth - 1
        if index >= state.pointee.openNamesCapacity { growOpenNames(state) }
        (state.pointee.openNames + index).initialize(to: split)
        state.pointee.handlerBox._withUnsafeGuaranteedRef { $0.handler.startElement(split, attributes: XMLAttributes(pairs: UnsafePointer(attributes), separator: separator)) }
    }

    @inline(never) static func growOpenNames(_ state: UnsafeMutablePointer<ParserState>) {
        let capacity = state.pointee.openNamesCapacity * 2
        let grown = UnsafeMutablePointer<XMLName>.allocate(capacity: capacity)
        grown.moveInitialize(from: state.pointee.openNames, count: state.pointee.openNamesCapacity)
        state.pointee.openNames.deallocate()
        state.pointee.openNames = grown
        state.pointee.openNamesCapacity = capacity
    }

    static func endElement(_ state: UnsafeMutablePointer<ParserState>, _ name: UnsafePointer<CChar>) {
        guard state.pointee.pendingError == nil else { return }
        ParserState.flushText(state)
        let index = state.pointee.depth - 1
        state.pointee.depth -= 1
        if index >= 0 && index < state.pointee.openNamesCapacity,
           case let open = state.pointee.openNames[index], open.raw.buffer.baseAddress == UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self) {
            state.pointee.handlerBox._withUnsafeGuaranteedRef { $0.handler.endElement(open) }
        } else {
            state.pointee.handlerBox._withUnsafeGuaranteedRef { $0.handler.endElement(XMLName(expatName: name, separator: state.pointee.separator)) }
        }
    }

    /// Appends a fragment of character data to the text being collected.
    ///
    /// expat reports text in fragments (every reference and line end splits it: ~570,000 calls for the benchmark's 20 MB
    /// feed), so the common case, room in the buffer, is a few checks and a copy inlined into the C callback; growing
    /// and the size limit are out of line (`appendCharactersSlowly`), which spares the fast path a stack frame (~8
    /// instructions a fragment, 4.8 M for that feed; issue 18). The buffer never grows past `maximumTextBytes`, so room
    /// in it is within the limit too.
    @inline(__always)
    static func characters(_ state: UnsafeMutablePointer<ParserState>, _ bytes: UnsafePointer<CChar>, _ length: Int) {
        guard state.pointee.collectingText || state.pointee.inCDATA, state.pointee.pendingError == nil,
              !state.pointee.textOverflow else { return }
        let count = state.pointee.textCount
        guard length <= state.pointee.textCapacity &- count else { return appendCharactersSlowly(state, bytes, length) }
        UnsafeMutableRawPointer(state.pointee.text + count).copyMemory(from: bytes, byteCount: length)
        state.pointee.textCount = count &+ length
    }

    /// ``characters(_:_:_:)`` when the buffer has no room: grows it, or marks the text as over the limit.
    @inline(never)
    static func appendCharactersSlowly(_ state: UnsafeMutablePointer<ParserState>, _ bytes: UnsafePointer<CChar>, _ length: Int) {
        let needed = state.pointee.textCount + length
        if needed > state.pointee.maximumTextBytes {
            // Keep what fits and stop growing; the node fails where it ends (see flushText).
            state.pointee.textOverflow = true
            if state.pointee.textCount == 0 { state.pointee.textCount = 1 }
            return
        }
        if needed > state.pointee.textCapacity {
            var capacity = state.pointee.textCapacity * 2
            while capacity < needed { capacity *= 2 }
            capacity = min(capacity, state.pointee.maximumTextBytes)
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            grown.update(from: state.pointee.text, count: state.pointee.textCount)
            state.pointee.text.deallocate()
            state.pointee.text = grown
            state.pointee.textCapacity = capacity
        }
        UnsafeMutableRawPointer(state.pointee.text + state.pointee.textCount).copyMemory(from: bytes, byteCount: length)
        state.pointee.textCount = needed
    }

    /// The index of `prefix` among the prefixes the repair filter declared, if it is one.
    static func injectedIndex(_ filter: InputRepairFilter, _ prefix: XMLBytes) -> Int? {
        guard !prefix.isEmpty,
              filter.injectedPrefixKeys & InputRepairFilter.prefixKey(count: prefix.count, first: prefix.buffer[0]) != 0 else { return nil }
        for (index, injected) in filter.injectedPrefixes.enumerated() where injected.count == prefix.count
            && injected.withUnsafeBufferPointer({ memcmp($0.baseAddress!, prefix.buffer.baseAddress!, prefix.count) }) == 0 {
            return index
        }
        return nil
    }

    /// Whether a namespace declaration event is one the repair filter or a restart added on the root (then it is not
    /// reported); otherwise keeps count of the document's own declarations of the added prefixes.
    static func isInjectedDeclaration(_ state: UnsafeMutablePointer<ParserState>, prefix: XMLBytes, starting: Bool) -> Bool {
        if state.pointee.depth == 0, !state.pointee.restartPrefixes.isEmpty,
           state.pointee.restartPrefixes.contains(where: { $0.elementsEqual(prefix.buffer) }) {
            return true  // on the root: a restart's own
        }
        guard let filter = state.pointee.repairFilter?.takeUnretainedValue(), let index = injectedIndex(filter, prefix) else { return false }
        if state.pointee.depth == 0 { return true }  // on the root element: the filter's own
        if state.pointee.redeclaredInjected.count < filter.injectedPrefixes.count {
            state.pointee.redeclaredInjected = Array(repeating: 0, count: filter.injectedPrefixes.count)
        }
        state.pointee.redeclaredInjected[index] += starting ? 1 : -1
        return false
    }

    /// Keeps a namespace declaration in ``bindings``; expat reports it before the start tag that makes it.
    static func noteBinding(_ state: UnsafeMutablePointer<ParserState>, prefix: UnsafePointer<CChar>?, uri: UnsafePointer<CChar>?) {
        state.pointee.bindings.append((state.pointee.depth + 1, Array(XMLBytes(cString: prefix).buffer), Array(XMLBytes(cString: uri).buffer)))
    }

    /// Forgets the innermost declaration of `prefix`, whose element ended.
    static func dropBinding(_ state: UnsafeMutablePointer<ParserState>, prefix: UnsafePointer<CChar>?) {
        let name = XMLBytes(cString: prefix).buffer
        if let index = state.pointee.bindings.lastIndex(where: { $0.prefix.elementsEqual(name) }) {
            state.pointee.bindings.remove(at: index)
        }
    }

    /// Marks the added prefixes this element or its attributes use while only the added declaration binds them.
    /// `name` is the element's, already split.
    static func noteUndeclaredPrefixes(_ state: UnsafeMutablePointer<ParserState>, _ filter: InputRepairFilter,
                                       _ name: XMLName, _ attributes: UnsafeMutablePointer<UnsafePointer<CChar>?>?) {
        @inline(__always) func note(_ prefix: XMLBytes) {
            guard !prefix.isEmpty, let index = injectedIndex(filter, prefix), index < 64 else { return }
            let redeclared = index < state.pointee.redeclaredInjected.count ? state.pointee.redeclaredInjected[index] : 0
            if redeclared == 0 { state.pointee.usedInjectedPrefixes |= 1 << UInt64(index) }
        }
        note(name.prefix)
        // Only a namespaced attribute has a prefix, and expat names only those with the separator.
        let separator = state.pointee.separator
        guard separator != 0, var pair = UnsafePointer(attributes) else { return }
        while let attributeName = pair.pointee {
            if strchr(attributeName, Int32(separator)) != nil { note(XMLName(expatName: attributeName, separator: separator).prefix) }
            pair += 2
        }
    }

    /// Records an error with the current position and stops expat (non-resumable); the Swift side throws it
    /// once `XML_Parse` has returned.
    static func fail(_ state: UnsafeMutablePointer<ParserState>, code: ExpatXMLError.Code, message: String) {
        guard state.pointee.pendingError == nil else { return }
        let expat = state.pointee.expat
        state.pointee.pendingError = PendingError(
            code: code, message: message, line: Int(XML_GetCurrentLineNumber(expat)),
            column: Int(XML_GetCurrentColumnNumber(expat)), byteOffset: Int64(XML_GetCurrentByteIndex(expat)))
        // XML_StopParser fails only when expat has already finished or stopped (XML_ERROR_FINISHED, …); the pending
        // error is thrown either way once XML_Parse returns, and the refusal is named in it rather than dropped.
        if state.pointee.insideExpat, XML_StopParser(expat, 0) != XML_STATUS_OK {
            let stopCode = XML_GetErrorCode(expat)
            let reason = XML_ErrorString(stopCode).map { String(cString: $0) } ?? "expat error \(stopCode.rawValue)"
            state.pointee.pendingError?.message += " (XML_StopParser refused: \(reason))"
        }
    }
}

extension XMLBytes {
    /// A view of a NUL-terminated C string from expat; empty for `NULL`.
    @inline(__always) init(cString: UnsafePointer<CChar>?) {
        guard let cString else {
            self.init(UnsafeBufferPointer(start: nil, count: 0))
            return
        }
        self.init(UnsafeBufferPointer(start: UnsafeRawPointer(cString).assumingMemoryBound(to: UInt8.self), count: strlen(cString)))
    }
}

/// Where a restarted expat's input came from (see ``XMLPushParser``'s restart after an unbound prefix): the failing
/// tag's position in the bytes the first parser read, the replayed open elements in front of it, and the declarations
/// inserted into it when it was the root. The replay and the insertion hold no newline.
struct ExpatRestart {
    /// The failing tag's line, column and byte offset in the first parser's bytes.
    let line: Int
    let column: Int
    let offset: Int64
    /// Bytes of replayed start tags before it.
    let prologLength: Int
    /// Declarations inserted after the root's name: where, in the bytes after the replay, and how many bytes.
    let insertion: (at: Int, length: Int)?

    /// A position of the restarted parser in the first parser's bytes.
    func translate(line: Int, column: Int, offset: Int64) -> (line: Int, column: Int, offset: Int64) {
        guard offset >= 0 else { return (line, column, offset) }
        var relative = max(0, offset - Int64(prologLength))
        var column = line == 1 ? max(0, column - prologLength) : column
        if let insertion, relative >= Int64(insertion.at + insertion.length) {
            relative -= Int64(insertion.length)
            if line == 1 { column = max(0, column - insertion.length) }
        }
        return line == 1 ? (self.line, self.column + column, self.offset + relative) : (self.line + line - 1, column, self.offset + relative)
    }
}

/// Reads the start tag expat refused for an unbound prefix: its name's end and the prefixes nothing binds.
enum UnboundPrefixes {
    /// The start tag at the beginning of `bytes` (`<name attr="value" …>`): where its name ends, and the prefixes of
    /// its name and attributes that neither `bound` nor the tag's own `xmlns:` attributes declare (`xml` is always
    /// bound), in order of first use. `nil` when `bytes` does not start with a whole start tag.
    static func scan(_ bytes: [UInt8], bound: [[UInt8]]) -> (nameEnd: Int, unbound: [[UInt8]])? {
        guard bytes.first == 0x3C else { return nil }
        func isNameByte(_ byte: UInt8) -> Bool {
            !(byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x2F || byte == 0x3E || byte == 0x3D
              || byte == 0x22 || byte == 0x27)
        }
        var names: [ArraySlice<UInt8>] = []
        var index = 1
        var nameEnd = 1
        var quote: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if quote != 0 {
                if byte == quote { quote = 0 }
                index += 1
            } else if byte == 0x22 || byte == 0x27 {
                quote = byte
                index += 1
            } else if byte == 0x3E {
                break
            } else if isNameByte(byte) {
                let start = index
                while index < bytes.count, isNameByte(bytes[index]) { index += 1 }
                if names.isEmpty { nameEnd = index }
                names.append(bytes[start..<index])
            } else {
                index += 1
            }
        }
        guard index < bytes.count, !names.isEmpty else { return nil }
        let xmlns = Array("xmlns".utf8)
        var declared = bound + [Array("xml".utf8)]
        var used: [[UInt8]] = []
        for name in names {
            guard let colon = name.firstIndex(of: 0x3A) else { continue }
            let prefix = Array(name[name.startIndex..<colon])
            if prefix == xmlns { declared.append(Array(name[(colon + 1)...])) } else if !used.contains(prefix) { used.append(prefix) }
        }
        return (nameEnd, used.filter { !$0.isEmpty && !declared.contains($0) })
    }

    /// Appends ` xmlns:prefix="uri"` (` xmlns="uri"` for the empty prefix), the URI escaped for an attribute value.
    static func appendDeclaration(prefix: [UInt8], uri: [UInt8], to bytes: inout [UInt8]) {
        bytes += Array(" xmlns".utf8)
        if !prefix.isEmpty { bytes.append(0x3A); bytes += prefix }
        bytes += [0x3D, 0x22]  // ="
        for byte in uri {
            switch byte {
            case 0x26: bytes += Array("&amp;".utf8)
            case 0x3C: bytes += Array("&lt;".utf8)
            case 0x22: bytes += Array("&quot;".utf8)
            default: bytes.append(byte)
            }
        }
        bytes.append(0x22)
    }
}
