// The one file that calls yajl (yajl/yajl_parse.h). C callbacks reach Swift through raw state, as ExpatXML's do: yajl's
// context pointer points at a `JSONParserState` struct, never at a Swift object, and nothing throws across C.
import CYajl
import Foundation
import Support

/// A streaming push parser over yajl that hands out byte views: JSON's counterpart of ExpatXML's `XMLPushParser`.
///
/// Feed it bytes with ``parse(_:)-(UnsafeRawBufferPointer)`` any number of times, split anywhere, then call
/// ``finish()``. Events reach the ``JSONEventHandler`` synchronously, inside those calls; strings, keys and numbers
/// arrive whole, so the events never depend on how the input was split. A UTF-8 byte-order mark at the start is
/// skipped (RFC 8259 allows a parser to ignore one). The parser keeps nothing of the document but yajl's buffer for a
/// token cut by a chunk boundary, which ``JSONConfiguration/maximumStringBytes`` bounds, so memory stays flat.
///
/// ```swift
/// let parser = JSONPushParser(handler: myHandler)
/// try parser.parse(chunk)       // as bytes arrive
/// try parser.finish()
/// // or at once: try JSONPushParser.parse(data, handler: myHandler)
/// ```
///
/// A parser is confined to the thread that uses it: it is deliberately not `Sendable`.
public final class JSONPushParser {
    /// The configuration the parser was created with.
    public let configuration: JSONConfiguration
    /// Where the events go. The parser keeps it alive.
    public let handler: any JSONEventHandler
    /// The input's name (a path or URL), copied into every error.
    public var source: String?

    /// `nil` only when yajl could not be set up; every call then fails with the error kept in `phase`.
    private var yajl: yajl_handle?
    private let state: UnsafeMutablePointer<JSONParserState>
    /// yajl keeps this pointer (yajl_alloc does not copy the table): it lives as long as the parser.
    private let callbacks: UnsafeMutablePointer<yajl_callbacks>
    private var phase = Phase.start
    /// The first bytes while they could still be a byte-order mark.
    private var head: [UInt8] = []
    private var scanner = TokenScanner()
    /// A number or literal the last chunk ended inside, held back for yajl until it ends (see ``feed(_:)``).
    private var carry: [UInt8] = []
    /// The opening quote of a string that the buffer yajl is parsing began inside, if it did (see ``check(_:atEnd:)``).
    private var stringOpenAtChunkStart: Int64?
    /// Bytes of input taken so far, the byte-order mark included.
    private var consumed: Int64 = 0
    /// Lines before the chunk being parsed (1-based: the line it starts on) and where that line starts.
    private var line = 1
    private var lineStart: Int64 = 0
    /// Whether anything but white space was seen (tells an empty document from a truncated one).
    private var sawValue = false

    private enum Phase {
        case start, parsing, finished
        case failed(JSONError)
    }

    /// Creates a parser that sends its events to `handler`.
    public init(handler: any JSONEventHandler, configuration: JSONConfiguration = .init(), source: String? = nil) {
        self.handler = handler
        self.configuration = configuration
        self.source = source
        state = .allocate(capacity: 1)
        state.initialize(to: JSONParserState(handler: handler, maximumDepth: configuration.maximumDepth))
        callbacks = .allocate(capacity: 1)
        callbacks.initialize(to: Self.callbackTable)
        yajl = yajl_alloc(callbacks, nil, UnsafeMutableRawPointer(state))
        state.pointee.yajl = yajl
        // An initialiser that cannot throw keeps a set-up failure for the caller's first parse(_:) or finish().
        do throws(JSONError) {
            try check(yajl != nil, "yajl_alloc", "yajl could not create a parser (out of memory)")
            if !configuration.validatesUTF8 {
                try check(cyajl_config_flag(yajl, yajl_dont_validate_strings, 1) != 0, "yajl_config(yajl_dont_validate_strings)")
            }
        } catch {
            phase = .failed(error)
        }
    }

    deinit {
        if let yajl { yajl_free(yajl) }
        state.deinitialize(count: 1)
        state.deallocate()
        callbacks.deinitialize(count: 1)
        callbacks.deallocate()
    }

    // MARK: Feeding bytes

    /// Parses the next bytes of the document. Any split is fine; events never depend on it.
    ///
    /// - Throws: ``JSONError`` when the document is not JSON, breaks a limit, or a handler aborted. After an error the
    ///   parser is finished, and every later call throws the same error.
    public func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONError) {
        switch phase {
        case .failed(let error): throw error
        case .finished: throw makeError(.finished, "parse(_:) called after finish()", at: consumed)
        case .parsing: try feed(bytes)
        case .start:
            // Hold the first bytes until they are known not to be a byte-order mark, then parse them.
            let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
            if head.isEmpty && bytes.count >= 3 {
                phase = .parsing
                if bytes.starts(with: mark) {
                    consumed = 3
                    lineStart = 3
                    try feed(UnsafeRawBufferPointer(rebasing: bytes[3...]))
                } else {
                    try feed(bytes)
                }
                return
            }
            head.append(contentsOf: bytes)
            if head.count < 3 && mark.starts(with: head) { return }
            phase = .parsing
            let held = head
            head = []
            if held.starts(with: mark) {
                consumed = 3
                lineStart = 3
                try feed(held: Array(held[3...]))
            } else {
                try feed(held: held)
            }
        }
    }

    /// Feeds bytes the parser held itself.
    private func feed(held: [UInt8]) throws(JSONError) {
        var failure: JSONError?
        held.withUnsafeBytes { buffer in
            do throws(JSONError) { try feed(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Parses the next bytes of the document, from any contiguous storage (`Data`, `[UInt8]`, …).
    public func parse(_ bytes: some ContiguousBytes) throws(JSONError) {
        var failure: JSONError?
        bytes.withUnsafeBytes { buffer in
            do throws(JSONError) { try parse(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Tells the parser the document is complete; yajl checks its end and the handler hears
    /// ``JSONEventHandler/endDocument()``.
    public func finish() throws(JSONError) {
        switch phase {
        case .failed(let error): throw error
        case .finished: return
        case .start:
            // Fewer than three bytes, all of them a byte-order mark's beginning: parse them as they are.
            phase = .parsing
            let held = head
            head = []
            try feed(held: held)
        case .parsing: break
        }
        if !carry.isEmpty {
            let held = carry
            carry = []
            var failure: JSONError?
            held.withUnsafeBytes { buffer in
                do throws(JSONError) { try parse(buffer, base: consumed - Int64(held.count), stringOpenBefore: nil) } catch { failure = error }
            }
            if let failure { throw failure }
        }
        state.pointee.chunkBase = consumed
        state.pointee.chunk = nil
        state.pointee.insideYajl = true
        let status = yajl_complete_parse(yajl)
        state.pointee.insideYajl = false
        try check(status, atEnd: true)
        phase = .finished
        handler.endDocument()
    }

    /// Stops parsing at once. Call it from a handler callback; the `parse` call in progress then throws
    /// ``JSONError/Code/aborted``, and no further event is delivered.
    public func abortParsing() {
        JSONParserState.fail(state, code: .aborted, message: "parsing aborted by the handler")
        if case .failed = phase { return }
        if case .finished = phase { return }
        if !state.pointee.insideYajl { phase = .failed(makeError(state.pointee.pendingError!)) }
    }

    // MARK: Reading the position

    /// The byte offset of the event being delivered: the end of its token (or of the bytes parsed so far).
    public var byteOffset: Int64 { currentOffset }
    /// The 1-based line of ``byteOffset``.
    public var lineNumber: Int { position(of: currentOffset).line }
    /// The 0-based column of ``byteOffset``, in bytes.
    public var columnNumber: Int { position(of: currentOffset).column }

    private var currentOffset: Int64 {
        guard state.pointee.insideYajl, let yajl else { return consumed }
        return state.pointee.chunkBase + Int64(yajl_get_bytes_consumed(yajl))
    }

    /// The line and column of an absolute offset in the chunk being parsed (or at its start): the lines before the
    /// chunk, plus the line feeds in it before the offset.
    private func position(of offset: Int64) -> (line: Int, column: Int) {
        var line = self.line
        var lineStart = self.lineStart
        if let chunk = state.pointee.chunk {
            let base = state.pointee.chunkBase
            let end = Int(max(0, min(offset - base, Int64(chunk.count))))
            Self.countLines(UnsafeRawBufferPointer(rebasing: chunk[..<end]), base: base, line: &line, lineStart: &lineStart)
        }
        return (line, Int(max(0, offset - lineStart)))
    }

    /// Counts the line feeds in `bytes` (at absolute `base`) with `memchr`, advancing `line` and `lineStart`.
    private static func countLines(_ bytes: UnsafeRawBufferPointer, base: Int64, line: inout Int, lineStart: inout Int64) {
        guard let start = bytes.baseAddress else { return }
        var index = 0
        while index < bytes.count, let found = memchr(start + index, 0x0A, bytes.count - index) {
            index = start.distance(to: UnsafeRawPointer(found)) + 1
            line += 1
            lineStart = base + Int64(index)
        }
    }

    // MARK: One-shot

    /// Parses a whole document held in memory: ``parse(_:)-(UnsafeRawBufferPointer)`` then ``finish()``.
    public static func parse(_ bytes: some ContiguousBytes, handler: any JSONEventHandler, configuration: JSONConfiguration = .init(),
                             source: String? = nil) throws(JSONError) {
        let parser = JSONPushParser(handler: handler, configuration: configuration, source: source)
        try parser.parse(bytes)
        try parser.finish()
    }

    /// Streams a file through the parser in `chunkSize` pieces, then finishes.
    ///
    /// - Throws: ``JSONError`` for a parse error, or ``JSONError/Code/readFailed`` when the file cannot be read.
    public func parse(contentsOfFile path: String, chunkSize: Int = 64 * 1024) throws(JSONError) {
        try FileChunks.read(path: path, chunkSize: chunkSize, failure: { reason in
            let error = JSONError(code: .readFailed, message: reason.message, byteOffset: consumed, source: source ?? path)
            phase = .failed(error)
            return error
        }) { (chunk) throws(JSONError) in try parse(chunk) }
        try finish()
    }

    // MARK: Internals

    /// Parses the next input bytes: checks the limits ahead of yajl (``TokenScanner``), then gives yajl every byte before
    /// the first one past a limit, holding back a number or literal the chunk ends inside.
    ///
    /// Why hold it back: yajl finishes such a token only in the next chunk, and then reports offsets for it (and for a
    /// grammar error on it) relative to that chunk, clamped at its start, so they would depend on the split. Held back,
    /// the token reaches yajl whole, with the next chunk. A string cut by a chunk boundary is left to yajl's buffer (it
    /// can be long); the one offset that then depends on the split is fixed in ``check(_:atEnd:)``.
    private func feed(_ bytes: UnsafeRawBufferPointer) throws(JSONError) {
        guard let start = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else { return }
        if !sawValue { sawValue = bytes.contains { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D } }
        // The limits come first: yajl sees only the bytes before the first byte past one.
        var count = bytes.count
        var limit: (code: JSONError.Code, message: String)?
        let room = configuration.maximumDocumentBytes - consumed
        if Int64(count) > room {
            count = Int(max(0, room))
            limit = (.documentTooLarge, "a document longer than the limit of \(configuration.maximumDocumentBytes) bytes")
        }
        let stringOpenBefore = scanner.inString ? scanner.stringStart : nil
        if let cut = scanner.scan(start, count: count, base: consumed, limit: configuration.maximumStringBytes) {
            count = cut
            limit = (.stringTooLarge, scanner.inString
                ? "a string longer than the limit of \(configuration.maximumStringBytes) bytes"
                : "a number or literal longer than the limit of \(configuration.maximumStringBytes) bytes")
        }
        // Hold back the run of number or literal bytes the chunk ends in (none before a limit error: all goes to yajl).
        var hold = 0
        if limit == nil, !scanner.inString, let runStart = scanner.runStart {
            hold = Int(min(Int64(count), consumed + Int64(count) - runStart))
        }
        let base = consumed - Int64(carry.count)
        if carry.isEmpty {
            try parse(UnsafeRawBufferPointer(start: start, count: count - hold), base: base, stringOpenBefore: stringOpenBefore)
            carry = Array(UnsafeBufferPointer(start: start + count - hold, count: hold))
        } else if hold == count {
            carry.append(contentsOf: UnsafeBufferPointer(start: start, count: count))
        } else {
            var joined = carry
            joined.append(contentsOf: UnsafeBufferPointer(start: start, count: count - hold))
            carry = Array(UnsafeBufferPointer(start: start + count - hold, count: hold))
            var failure: JSONError?
            joined.withUnsafeBytes { buffer in
                do throws(JSONError) { try parse(buffer, base: base, stringOpenBefore: nil) } catch { failure = error }
            }
            if let failure { throw failure }
        }
        consumed += Int64(count)
        if let limit {
            let failure = makeError(limit.code, limit.message, at: consumed)
            phase = .failed(failure)
            throw failure
        }
    }

    /// Hands yajl one buffer that starts at absolute offset `base`, then counts its lines.
    private func parse(_ buffer: UnsafeRawBufferPointer, base: Int64, stringOpenBefore: Int64?) throws(JSONError) {
        guard let start = buffer.baseAddress, !buffer.isEmpty else { return }
        state.pointee.chunkBase = base
        state.pointee.chunk = buffer
        stringOpenAtChunkStart = stringOpenBefore
        state.pointee.insideYajl = true
        let status = yajl_parse(yajl, start.assumingMemoryBound(to: UInt8.self), buffer.count)
        state.pointee.insideYajl = false
        try check(status, atEnd: false)
        Self.countLines(buffer, base: base, line: &line, lineStart: &lineStart)
        state.pointee.chunkBase = base + Int64(buffer.count)
        state.pointee.chunk = nil
    }

    /// Checks what `yajl_parse` or `yajl_complete_parse` returned: an error a callback kept (the client cancelled) or
    /// yajl's own, with its message (`yajl_get_error`) and where its lexer stopped (`yajl_get_bytes_consumed`).
    ///
    /// For a grammar error yajl moves the offset back to the token's start (its end less its length, for a string the
    /// length between the quotes), clamped at the chunk's start: for a string that began in an earlier chunk it is then
    /// 0, where the whole document would give the string's opening quote plus 2. That is put back here. An error at the
    /// end (`yajl_complete_parse`) is the input ending inside a value or token, reported at the input's end.
    private func check(_ status: yajl_status, atEnd: Bool) throws(JSONError) {
        // A callback's error counts even if yajl went on and returned OK (it cannot: a callback returning 0 cancels).
        guard status != yajl_status_ok || state.pointee.pendingError != nil else { return }
        let failure: JSONError
        if let pending = state.pointee.pendingError {
            failure = makeError(pending)
        } else {
            let message = Self.errorMessage(yajl)
            var offset = consumed
            if !atEnd {
                let inChunk = Int64(yajl.map(yajl_get_bytes_consumed) ?? 0)
                offset = state.pointee.chunkBase + inChunk
                if inChunk == 0, message.hasPrefix("parse error"), let stringStart = stringOpenAtChunkStart { offset = stringStart + 2 }
            }
            let code: JSONError.Code
            if atEnd { code = sawValue ? .truncated : .empty }
            else if message.contains("invalid bytes in UTF8 string") { code = .invalidUTF8 }
            else if message.contains("invalid character inside string") { code = .controlCharacter }
            else { code = .syntax }
            failure = makeError(code, code == .empty ? "no JSON value: the document is empty" : message, at: offset)
        }
        state.pointee.chunk = nil
        phase = .failed(failure)
        throw failure
    }

    /// yajl's description of its error (not verbose: the verbose form quotes the input), without the trailing newline.
    private static func errorMessage(_ yajl: yajl_handle?) -> String {
        guard let yajl, let text = yajl_get_error(yajl, 0, nil, 0) else { return "yajl reported an error it could not describe" }
        defer { yajl_free_error(yajl, text) }
        return String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Checks a set-up call (`yajl_alloc`, `yajl_config`); `message` says what failed, else `function` is named.
    private func check(_ succeeded: Bool, _ function: String, _ message: String? = nil) throws(JSONError) {
        guard !succeeded else { return }
        throw JSONError(code: .setupFailed, message: message ?? "yajl refused \(function)", source: source)
    }

    private func makeError(_ code: JSONError.Code, _ message: String, at offset: Int64) -> JSONError {
        let position = position(of: offset)
        return JSONError(code: code, message: message, byteOffset: offset, line: position.line, column: position.column, source: source)
    }

    private func makeError(_ pending: PendingJSONError) -> JSONError {
        makeError(pending.code, pending.message, at: pending.byteOffset)
    }

    /// The C callbacks: each turns yajl's arguments into an event, and returns 0 (cancel) once an error is kept.
    private static let callbackTable = yajl_callbacks(
        yajl_null: { context in
            let state = JSONParserState.from(context)
            state.pointee.handler.null()
            return state.pointee.proceed
        },
        yajl_boolean: { context, value in
            let state = JSONParserState.from(context)
            state.pointee.handler.boolean(value != 0)
            return state.pointee.proceed
        },
        yajl_integer: nil,
        yajl_double: nil,
        yajl_number: { context, text, length in
            let state = JSONParserState.from(context)
            let bytes = UnsafeRawPointer(text!).assumingMemoryBound(to: UInt8.self)
            state.pointee.handler.number(JSONBytes(UnsafeBufferPointer(start: bytes, count: length)))
            return state.pointee.proceed
        },
        yajl_string: { context, text, length in
            let state = JSONParserState.from(context)
            state.pointee.handler.string(JSONBytes(UnsafeBufferPointer(start: text, count: length)))
            return state.pointee.proceed
        },
        yajl_start_map: { context in
            let state = JSONParserState.from(context)
            guard JSONParserState.descend(state) else { return 0 }
            state.pointee.handler.startObject()
            return state.pointee.proceed
        },
        yajl_map_key: { context, text, length in
            let state = JSONParserState.from(context)
            state.pointee.handler.key(JSONBytes(UnsafeBufferPointer(start: text, count: length)))
            return state.pointee.proceed
        },
        yajl_end_map: { context in
            let state = JSONParserState.from(context)
            state.pointee.depth -= 1
            state.pointee.handler.endObject()
            return state.pointee.proceed
        },
        yajl_start_array: { context in
            let state = JSONParserState.from(context)
            guard JSONParserState.descend(state) else { return 0 }
            state.pointee.handler.startArray()
            return state.pointee.proceed
        },
        yajl_end_array: { context in
            let state = JSONParserState.from(context)
            state.pointee.depth -= 1
            state.pointee.handler.endArray()
            return state.pointee.proceed
        })
}

@available(*, unavailable, message: "a parser is confined to one thread")
extension JSONPushParser: Sendable {}

/// An error found inside a callback, kept until the C call returns (never thrown across C).
struct PendingJSONError {
    var code: JSONError.Code
    var message: String
    var byteOffset: Int64
}

/// Everything the C callbacks touch, in one struct behind a pointer: no class property, no exclusivity check.
struct JSONParserState {
    unowned(unsafe) let handler: any JSONEventHandler
    let maximumDepth: Int
    var yajl: yajl_handle?
    var depth = 0
    var insideYajl = false
    /// The absolute offset of the chunk yajl is parsing, and the chunk itself (for line numbers in errors).
    var chunkBase: Int64 = 0
    var chunk: UnsafeRawBufferPointer?
    var pendingError: PendingJSONError?

    init(handler: any JSONEventHandler, maximumDepth: Int) {
        self.handler = handler
        self.maximumDepth = maximumDepth
    }

    @inline(__always) static func from(_ context: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<JSONParserState> {
        context!.assumingMemoryBound(to: JSONParserState.self)
    }

    /// 1 to go on; 0, which makes yajl stop with `yajl_status_client_canceled`, once an error is kept.
    @inline(__always) var proceed: Int32 { pendingError == nil ? 1 : 0 }

    /// One level deeper, unless that passes the depth limit (then the error is kept and the caller returns 0).
    @inline(__always) static func descend(_ state: UnsafeMutablePointer<JSONParserState>) -> Bool {
        state.pointee.depth += 1
        guard state.pointee.depth > state.pointee.maximumDepth else { return true }
        fail(state, code: .depthLimitExceeded, message: "objects and arrays nested deeper than the limit of \(state.pointee.maximumDepth)")
        return false
    }

    /// Keeps an error at the end of the current token; the callback then returns 0 and the Swift side throws it once
    /// yajl has returned.
    static func fail(_ state: UnsafeMutablePointer<JSONParserState>, code: JSONError.Code, message: String) {
        guard state.pointee.pendingError == nil else { return }
        var offset = state.pointee.chunkBase
        if state.pointee.insideYajl, let yajl = state.pointee.yajl { offset += Int64(yajl_get_bytes_consumed(yajl)) }
        state.pointee.pendingError = PendingJSONError(code: code, message: message, byteOffset: offset)
    }
}
