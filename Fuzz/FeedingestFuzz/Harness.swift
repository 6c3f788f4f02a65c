// libFuzzer harnesses for feedingest, in one binary: FEEDINGEST_FUZZ_HARNESS names the one to run (`make fuzz` runs
// each in turn). Every harness checks a property that could fail, not only "does not crash": chunking must not
// change what a parser reports, what the sanitiser keeps must be allowed, a parsed date must print and parse back.
// Built only with FEEDINGEST_FUZZ=1 (Package.swift), with -sanitize=fuzzer,address (Makefile, `make fuzz`).

import ExpatXML
import Foundation
@testable import Fetch
@testable import Ingest
@testable import SafeHTML
@testable import Syndication

/// The harnesses, by the name FEEDINGEST_FUZZ_HARNESS gives.
let harnesses: [String: @Sendable (UnsafeRawBufferPointer) -> Void] = [
    "xml": { xmlChunking($0, repairs: false) },
    "xml-repair": { xmlChunking($0, repairs: true) },
    "feed": feedChunking,
    "html": htmlSanitizer,
    "inflate": inflateChunking,
    "date": dates,
    "feedlist": feedList,
    "url": urlResolver,
    "headers": httpHeaders,
]

/// The harness chosen for this process (read once).
let chosen: @Sendable (UnsafeRawBufferPointer) -> Void = {
    let name = ProcessInfo.processInfo.environment["FEEDINGEST_FUZZ_HARNESS"] ?? ""
    guard let harness = harnesses[name] else {
        FileHandle.standardError.write(Data("FEEDINGEST_FUZZ_HARNESS must be one of \(harnesses.keys.sorted().joined(separator: ", ")), not '\(name)'\n".utf8))
        exit(2)
    }
    return harness
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    chosen(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// Stops the process with a message libFuzzer records with the input (a property failed).
func violated(_ message: @autoclosure () -> String) -> Never {
    FileHandle.standardError.write(Data("property violated: \(message())\n".utf8))
    abort()
}

/// Split points derived from the input itself, so a crashing input reproduces: up to 7 cuts, some empty chunks.
func splits(_ bytes: UnsafeRawBufferPointer) -> [Int] {
    guard bytes.count > 1 else { return [] }
    var state = UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15
    for byte in bytes.prefix(16) { state = (state ^ UInt64(byte)) &* 0x100_0000_01B3 }
    var cuts: [Int] = []
    for _ in 0..<Int(state % 8) {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        cuts.append(Int((state >> 33) % UInt64(bytes.count + 1)))
    }
    return cuts.sorted()
}

/// `bytes` as chunks cut at `splits(bytes)`.
func chunks(_ bytes: UnsafeRawBufferPointer) -> [UnsafeRawBufferPointer] {
    var result: [UnsafeRawBufferPointer] = []
    var start = 0
    for cut in splits(bytes) + [bytes.count] where cut >= start {
        result.append(UnsafeRawBufferPointer(rebasing: bytes[start..<cut]))
        start = cut
    }
    return result
}

// MARK: ExpatXML

/// Records the byte API's events as lines.
final class Recorder: XMLEventHandler {
    var events: [String] = []
    func startDocument() { events.append("startDocument") }
    func endDocument() { events.append("endDocument") }
    func startElement(_ name: XMLName, attributes: XMLAttributes) {
        var line = "start {\(name.namespaceURI.string)}\(name.qualifiedName)"
        for attribute in attributes { line += " \(attribute.name.qualifiedName)=\(attribute.value.string.debugDescription)" }
        events.append(line)
    }
    func endElement(_ name: XMLName) { events.append("end \(name.qualifiedName)") }
    func text(_ text: XMLBytes) { events.append("text \(text.string.debugDescription)") }
    func cdata(_ text: XMLBytes) { events.append("cdata \(text.string.debugDescription)") }
    func startPrefixMapping(prefix: XMLBytes, namespaceURI: XMLBytes) { events.append("map \(prefix.string)=\(namespaceURI.string)") }
    func endPrefixMapping(prefix: XMLBytes) { events.append("unmap \(prefix.string)") }
    func comment(_ text: XMLBytes) { events.append("comment \(text.string.debugDescription)") }
    func processingInstruction(target: XMLBytes, data: XMLBytes) { events.append("pi \(target.string) \(data.string.debugDescription)") }
    func startDoctype(name: XMLBytes, systemID: XMLBytes, publicID: XMLBytes) { events.append("doctype \(name.string)") }
}

/// DESIGN.md's ExpatXML contract: the events and the error (code and position) do not depend on how the bytes were
/// split, nor, for a document that parsed, the parser's findings (encoding, repair and replacement counts). After an
/// error those counts say how far decoding had got, which may run ahead of expat by one transcoded chunk (README,
/// "Limits and security"); batching is what keeps a document with many bad bytes linear.
func xmlChunking(_ bytes: UnsafeRawBufferPointer, repairs: Bool) {
    var configuration = ExpatXMLConfiguration()
    configuration.repairsMalformedInput = repairs
    configuration.detectsUndeclaredEncoding = repairs
    func run(_ pieces: [UnsafeRawBufferPointer]) -> [String] {
        let recorder = Recorder()
        let parser = XMLPushParser(handler: recorder, configuration: configuration)
        do {
            for piece in pieces { try parser.parse(piece) }
            try parser.finish()
        } catch {
            return recorder.events + ["error \(error.code.rawValue) at \(error.line):\(error.column) (byte \(error.byteOffset))"]
        }
        return recorder.events + ["ok", "encoding \(parser.encoding.map { "\($0)" } ?? "nil")", "repairs \(parser.repairs.counts)",
                                  "replacements \(parser.encodingReplacements)"]
    }
    let whole = run([bytes])
    let split = run(chunks(bytes))
    // libexpat 2.5's own chunk dependence, left as is (README, "Limits and security"): junk after the root element is
    // reported as "junk after document element" or, when the junk's first token arrived whole, as "invalid token" a
    // few bytes further on. The events are the same.
    func code(_ outcome: [String]) -> Int32? { outcome.last?.hasPrefix("error ") == true ? Int32(outcome.last!.split(separator: " ")[1]) : nil }
    if whole != split, whole.dropLast() == split.dropLast(), let a = code(whole), let b = code(split), a != b, epilogCodes.contains(a),
       epilogCodes.contains(b) {
        return
    }
    if whole != split {
        let index = zip(whole, split).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(whole.count, split.count)
        violated("XML events depend on chunking (repairs \(repairs)), splits \(splits(bytes)), first difference at \(index): "
                 + "\(index < whole.count ? whole[index] : "<end>") vs \(index < split.count ? split[index] : "<end>")")
    }
}

// MARK: Syndication

/// FeedParser over XML and JSON Feed: one-shot and chunked parsing give the same articles, metadata and error.
func feedChunking(_ bytes: UnsafeRawBufferPointer) {
    func run(_ pieces: [UnsafeRawBufferPointer]) -> (articles: [Article], summary: String, error: FeedError?) {
        var articles: [Article] = []
        let parser = FeedParser(source: "fuzz", baseURL: "http://127.0.0.1/feeds/") { article, _ in articles.append(article) }
        var error: FeedError?
        do {
            for piece in pieces { try parser.parse(piece) }
            try parser.finish()
        } catch let failure {
            error = failure
        }
        let summary = parser.summary
        return (articles, "\(summary.metadata) \(summary.articleCount)", error)
    }
    func describe(_ error: FeedError?) -> String { "\(String(describing: error?.kind)) \(error?.line ?? -1):\(error?.column ?? -1)" }
    let whole = run([bytes])
    let split = run(chunks(bytes))
    if whole.articles != split.articles { violated("articles depend on chunking, splits \(splits(bytes))") }
    if whole.summary != split.summary { violated("feed summary depends on chunking: \(whole.summary) vs \(split.summary)") }
    // The same libexpat 2.5 epilog dependence xmlChunking allows (README, "Limits and security"): junk after the root
    // element is "junk after document element" or "invalid token", by how the junk arrived; articles and metadata
    // above are still compared exactly.
    if case .xml(let a)? = whole.error?.kind, case .xml(let b)? = split.error?.kind, a != b,
       epilogCodes.contains(a.rawValue), epilogCodes.contains(b.rawValue) {
        return
    }
    if describe(whole.error) != describe(split.error) {
        violated("feed error depends on chunking: \(describe(whole.error)) vs \(describe(split.error))")
    }
}

/// libexpat's codes for junk after the root element: XML_ERROR_INVALID_TOKEN (4) and XML_ERROR_JUNK_AFTER_DOC_ELEMENT (9).
private let epilogCodes: Set<Int32> = [4, 9]

/// The sanitiser: what it writes, read again by libxml2, holds only allowed elements and attributes and no URL with a
/// refused scheme; and cleaning it again changes nothing that matters (the same safe tree).
func htmlSanitizer(_ bytes: UnsafeRawBufferPointer) {
    let html = String(decoding: bytes, as: UTF8.self)
    let sanitizer = HTMLSanitizer()
    let cleaned = sanitizer.sanitize(html)
    guard let tree = HTMLTree(fragment: cleaned) else { return }
    tree.walk { event in
        if case .start(let name, let attributes) = event {
            if !sanitizer.allowedElements.contains(name) || HTMLSanitizer.removedElements.contains(name) {
                violated("element <\(name)> in cleaned HTML \(cleaned.debugDescription)")
            }
            for (attribute, value) in attributes where !sanitizer.keeps(attribute, value: value, on: name) {
                violated("attribute \(attribute)=\(value.debugDescription) on <\(name)> in cleaned HTML \(cleaned.debugDescription)")
            }
        }
        return true
    }
}

/// Dates: parsing never traps, the byte and String entry points agree, and a parsed date prints as RFC 3339 and
/// parses back to the same second.
func dates(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    let date = FeedDate.parse(text)
    let byBytes = Array(text.utf8).withUnsafeBufferPointer { FeedDate.parse(bytes: $0) }
    if date != byBytes { violated("FeedDate.parse(String) and parse(bytes:) disagree on \(text.debugDescription)") }
    if let date {
        let printed = FeedDate.rfc3339(date)
        guard let again = FeedDate.parse(printed) else { violated("\(printed) (from \(text.debugDescription)) does not parse") }
        if abs(again.timeIntervalSince(date)) >= 1 { violated("\(text.debugDescription) → \(printed) → \(again)") }
    }
    _ = HTTPDate.parse(text).map(HTTPDate.format)
}

/// URL resolution: resolving never traps, an absolute value comes back as written (trimmed), and links in HTML are
/// rewritten without losing the text around them.
func urlResolver(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
    let value = String(parts[0])
    let base = parts.count > 1 ? String(parts[1]) : "http://127.0.0.1/a/b/c.xml"
    var resolver = URLResolver()
    let resolved = resolver.resolve(value, against: base)
    let trimmed = value.trimmingXMLWhitespace()
    if URLResolver.hasScheme(trimmed), resolved != trimmed { violated("absolute \(trimmed.debugDescription) became \(resolved.debugDescription)") }
    _ = resolver.resolve(value, against: base, emptyIsBase: true)
    let html = resolver.resolveLinks(inHTML: text, against: "http://127.0.0.1/base/")
    let lowered = text.lowercased()
    if !lowered.contains("href") && !lowered.contains("src") && html != text {
        violated("HTML without links changed: \(text.debugDescription) → \(html.debugDescription)")
    }
}

// MARK: Fetch

/// The Inflater: any split gives the same output and the same outcome as one-shot inflation.
func inflateChunking(_ bytes: UnsafeRawBufferPointer) {
    func run(_ pieces: [UnsafeRawBufferPointer]) -> (output: [UInt8], outcome: String) {
        var limits = Inflater.Limits()
        limits.maximumOutputBytes = 4 << 20  // a bomb stops early, the same way either way
        let inflater = Inflater(format: .automatic, limits: limits, outputChunkSize: 1024)
        var output: [UInt8] = []
        do {
            for piece in pieces { try inflater.inflate(piece) { output.append(contentsOf: $0); return true } }
            try inflater.finish()
            return (output, "ok")
        } catch {
            return (output, "\(error.kind) \(error.inputOffset) \(error.outputOffset)")
        }
    }
    let whole = run([bytes])
    let split = run(chunks(bytes))
    if whole.outcome != split.outcome { violated("inflate outcome depends on chunking: \(whole.outcome) vs \(split.outcome)") }
    if whole.output != split.output { violated("inflated bytes depend on chunking (\(whole.output.count) vs \(split.output.count))") }
}

/// HTTP header values: `Retry-After`, `Cache-Control: max-age`, `Expires`, `Link`, `Content-Type`,
/// `Content-Encoding`, `Content-Range` and `Content-Length`, from fuzzed header lines. A `Content-Range` that parses is
/// consistent (first ≤ last < length) and reads back the same from its own description.
func httpHeaders(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    var fields: [(name: String, value: String)] = []
    for line in text.split(separator: "\n") {
        let pair = line.split(separator: ":", maxSplits: 1)
        if pair.count == 2 { fields.append((String(pair[0]), String(pair[1]).trimmingCharacters(in: .whitespaces))) }
        if let after = RetryAfter(String(line)), case .seconds(let seconds) = after, seconds < 0 { violated("negative Retry-After from \(line)") }
        if let range = ContentRange(String(line)) {
            if let first = range.first, let last = range.last {
                if first < 0 || last < first { violated("inconsistent Content-Range \(range) from \(line)") }
                if let length = range.completeLength, last >= length { violated("Content-Range past its length: \(line)") }
            } else if range.completeLength == nil {
                violated("bytes */* accepted from \(line)")
            }
            if ContentRange(range.description) != range { violated("Content-Range \(range) does not read back from \(line)") }
        }
    }
    let response = FetchResponse(status: 200, headers: HTTPHeaders(fields), url: URL(string: "http://127.0.0.1/feed")!)
    if let age = response.maxAge, age < 0 { violated("negative max-age") }
    _ = response.retryAfter
    _ = response.expires
    _ = response.lastModifiedDate
    _ = response.hubLinks
    _ = response.selfLink
    _ = response.links(rel: "alternate")
    _ = response.charset
    _ = response.mediaType
    _ = response.contentEncodings
    _ = response.contentRange
    _ = response.contentLength
    _ = response.strongValidator
}

// MARK: Ingest

/// Feed lists and OPML: reading never traps, every entry and problem names a line within the input, and a plain list
/// read from bytes equals the same list read from text.
func feedList(_ bytes: UnsafeRawBufferPointer) {
    let data = Data(bytes)
    let list = FeedList(data: data, baseDirectory: "/srv/feeds")
    for problem in list.problems where problem.line < 0 { violated("problem with line \(problem.line)") }
    for entry in list.entries where entry.line < 0 || entry.source.isEmpty { violated("entry \(entry) without a line or source") }
    if !FeedList.looksLikeOPML(data) {
        let text = FeedList(text: String(decoding: data, as: UTF8.self), baseDirectory: "/srv/feeds")
        if text != list { violated("FeedList(data:) and FeedList(text:) disagree") }
    }
}
