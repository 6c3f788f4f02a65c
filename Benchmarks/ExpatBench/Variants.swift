import CExpatNoop
import ExpatXML
import Fetch
import Foundation
import Syndication
#if canImport(FoundationXML)
import FoundationXML
import TestSupport
#endif

/// The implementations compared, in the order every round runs them.
enum Variant: String, CaseIterable, Codable, Sendable {
    case cNoop = "c-noop"
    case byteAPI = "byte-api"
    case stringAPI = "string-api"
    /// The String API without the text opt-out: every text node becomes a `String`, as with Foundation.
    case stringAPIEveryText = "string-api-all-text"
    case foundationStream = "xmlparser-stream"
    case foundationData = "xmlparser-data"
    /// Syndication's FeedParser: every field of every article, dates parsed, URLs resolved, repairs on.
    case syndication = "syndication"
    /// The same from the gzip copy of the feed, decompressed as it streams by Fetch's `Inflater`.
    case syndicationGzip = "syndication-gz"
    /// Not a parser: the child process that does nothing, for the RSS floor of this binary.
    case idle

    static let timed: [Variant] = [.cNoop, .byteAPI, .stringAPI, .stringAPIEveryText, .syndication, .syndicationGzip, .foundationStream, .foundationData]

    /// Reads the gzip copy of a fixture.
    var readsGzip: Bool { self == .syndicationGzip }

    var title: String {
        switch self {
        case .cNoop: "C libexpat, no-op handlers"
        case .byteAPI: "ExpatXML byte API (XMLPushParser)"
        case .stringAPI: "ExpatXML String API (ExpatXMLParser)"
        case .stringAPIEveryText: "  the same, a String for every text node"
        case .foundationStream: "Foundation XMLParser(stream:)"
        case .foundationData: "Foundation XMLParser(data:)"
        case .syndication: "Syndication FeedParser (full articles)"
        case .syndicationGzip: "Syndication from .gz (Inflater, full articles)"
        case .idle: "idle process (floor)"
        }
    }
}

/// One parse, timed, with what it saw.
struct RunOutcome: Codable {
    var ok: Bool
    /// Wall time, from before the parser is created to after it finished.
    var seconds: Double
    /// This thread's CPU time over the same span (less disturbed than wall time on a shared machine).
    var cpuSeconds: Double?
    var firstItemSeconds: Double?
    var items: Int?
    /// Start tags (only the C no-op counts these).
    var elements: Int?
    var tally: WorkTally?
    var failure: String?
    /// Syndication only: how many articles had a parsed date.
    var parsedDates: Int?
}

/// Where a variant gets its bytes: all in memory (the timed rounds) or streamed (the peak-RSS probes).
enum Input {
    /// The whole document, already in memory; parsers are fed `chunkSize` slices of it.
    case memory(Data)
    /// A file read with read(2) in `chunkSize` pieces into one reused buffer.
    case file(path: String)
    /// A feed generated on the fly, chunk by chunk, never stored.
    case generated(FeedGenerator)
}

enum Runner {
    /// Runs `variant` once over `input`, checking what it saw against `manifest` (when known).
    static func run(_ variant: Variant, input: Input, format: FeedFormat, chunkSize: Int, manifest: FeedManifest?) -> RunOutcome {
        var manifest = manifest
        return run(variant, input: input, format: format, chunkSize: chunkSize, manifest: &manifest)
    }

    /// Runs `variant` once; a generated input sets `manifest` to the generator's, once it has been generated.
    static func run(_ variant: Variant, input: Input, format: FeedFormat, chunkSize: Int, manifest: inout FeedManifest?) -> RunOutcome {
        var outcome: RunOutcome
        switch variant {
        case .idle: return RunOutcome(ok: true, seconds: 0)
        case .cNoop: outcome = runCNoop(input, chunkSize: chunkSize)
        case .byteAPI: outcome = runByteAPI(input, format: format, chunkSize: chunkSize, generated: &manifest)
        case .stringAPI: outcome = runStringAPI(input, format: format, chunkSize: chunkSize, selective: true, generated: &manifest)
        case .stringAPIEveryText:
            outcome = runStringAPI(input, format: format, chunkSize: chunkSize, selective: false, generated: &manifest)
        case .foundationStream, .foundationData: outcome = runFoundation(variant, input, format: format)
        case .syndication: outcome = runSyndication(input, chunkSize: chunkSize, gzip: false, generated: &manifest)
        case .syndicationGzip: outcome = runSyndication(input, chunkSize: chunkSize, gzip: true, generated: &manifest)
        }
        if let manifest { verify(&outcome, against: manifest) }
        return outcome
    }

    /// A run passes only if it parsed to the end and extracted exactly what the generator wrote.
    static func verify(_ outcome: inout RunOutcome, against manifest: FeedManifest) {
        guard outcome.ok else { return }
        if let elements = outcome.elements, elements != manifest.elements {
            outcome.ok = false
            outcome.failure = "saw \(elements) elements, expected \(manifest.elements)"
        }
        if let parsedDates = outcome.parsedDates, var tally = outcome.tally {
            // Syndication reports dates parsed, not their raw bytes: every article's date must have parsed.
            tally.pubDateBytes = manifest.expected.pubDateBytes
            if parsedDates != tally.items {
                outcome.ok = false
                outcome.failure = "\(tally.items - parsedDates) articles without a parsed date"
                return
            }
            outcome.tally = tally
        }
        if let tally = outcome.tally, tally != manifest.expected {
            outcome.ok = false
            outcome.failure = tally.items != manifest.items
                ? "saw \(tally.items) items, expected \(manifest.items)"
                : "extracted fields differ from the generator's: \(tally) vs \(manifest.expected)"
        }
    }

    // MARK: Variants

    private static func runCNoop(_ input: Input, chunkSize: Int) -> RunOutcome {
        let clock = Stopwatch()
        let elements: Int
        switch input {
        case .memory(let data):
            elements = data.withUnsafeBytes { bytes in
                cexpat_noop_parse(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count, chunkSize, 1)
            }
        case .file(let path):
            let fd = open(path, O_RDONLY)
            guard fd >= 0 else { return RunOutcome(ok: false, seconds: 0, failure: "cannot open \(path)") }
            elements = cexpat_noop_parse_fd(fd, chunkSize, 1)
            close(fd)
        case .generated:
            return RunOutcome(ok: false, seconds: 0, failure: "the C no-op reads memory or a file, not a generator")
        }
        let (seconds, cpu) = clock.read()
        guard elements >= 0 else { return RunOutcome(ok: false, seconds: seconds, cpuSeconds: cpu, failure: "libexpat reported an error") }
        // The C no-op cannot tell items apart; it is checked by its element count instead.
        return RunOutcome(ok: true, seconds: seconds, cpuSeconds: cpu, elements: elements)
    }

    private static func runByteAPI(_ input: Input, format: FeedFormat, chunkSize: Int, generated: inout FeedManifest?) -> RunOutcome {
        let clock = Stopwatch()
        let handler = ByteAPIHandler(format: format, startNanos: clock.wallStart)
        let parser = XMLPushParser(handler: handler)
        handler.parser = parser
        let failure = feed(input, chunkSize: chunkSize, generated: &generated,
                           parse: { try parser.parse($0) }, finish: { try parser.finish() })
        return outcome(handler.record, clock.read(), failure: failure)
    }

    private static func runStringAPI(_ input: Input, format: FeedFormat, chunkSize: Int, selective: Bool,
                                     generated: inout FeedManifest?) -> RunOutcome {
        let clock = Stopwatch()
        let delegate = StringAPIDelegate(format: format, startNanos: clock.wallStart, selective: selective)
        let parser = ExpatXMLParser()
        parser.delegate = delegate
        let failure = feed(input, chunkSize: chunkSize, generated: &generated,
                           parse: { try parser.parse($0) }, finish: { try parser.finish() })
        let times = clock.read()
        return withExtendedLifetime(delegate) { outcome(delegate.work.record, times, failure: failure) }
    }

    /// Full article extraction: the product's own parser, all fields, dates parsed, repairs on. The tally checks
    /// title, link and guid bytes against the generator; the date is checked by parsing (pubDateBytes counts the
    /// raw text only when it parsed), so an article whose date did not parse fails the run.
    private static func runSyndication(_ input: Input, chunkSize: Int, gzip: Bool, generated: inout FeedManifest?) -> RunOutcome {
        let clock = Stopwatch()
        var record = WorkRecord()
        // One access to the captured record an article: each access to a captured `var` is checked for exclusivity at
        // run time, and six of them were ~450 instructions an article, the harness's cost rather than the parser's.
        let parser = FeedParser(source: "bench") { article, _ in record.count(article, since: clock.wallStart) }
        let failure: String?
        if gzip {
            // Compressed chunks in, decompressed chunks of the Inflater's default size out (as Delivery makes them),
            // each parsed as it comes: the pipeline's own path.
            let inflater = Inflater(format: .gzip)
            var parseError: (any Error)?
            failure = feed(input, chunkSize: chunkSize, generated: &generated, parse: { compressed in
                try inflater.inflate(compressed) { decompressed in
                    do { try parser.parse(decompressed); return true } catch { parseError = error; return false }
                }
                if let parseError { throw parseError }
            }, finish: {
                try inflater.finish()
                try parser.finish()
            })
        } else {
            failure = feed(input, chunkSize: chunkSize, generated: &generated,
                           parse: { try parser.parse($0) }, finish: { try parser.finish() })
        }
        var outcome = outcome(record, clock.read(), failure: failure)
        outcome.parsedDates = record.parsedDates
        return outcome
    }

    private static func runFoundation(_ variant: Variant, _ input: Input, format: FeedFormat) -> RunOutcome {
        var loaded: Data?
        let clock: Stopwatch
        let parser: XMLParser
        switch (variant, input) {
        case (.foundationStream, .memory(let data)):
            clock = Stopwatch()
            parser = XMLParser(stream: InputStream(data: data))
        case (.foundationStream, .file(let path)):
            clock = Stopwatch()
            guard let stream = InputStream(fileAtPath: path) else { return RunOutcome(ok: false, seconds: 0, failure: "cannot open \(path)") }
            parser = XMLParser(stream: stream)
        case (.foundationData, .memory(let data)):
            clock = Stopwatch()
            parser = XMLParser(data: data)
        case (.foundationData, .file(let path)):
            // XMLParser(data:) needs the whole document in memory: that is its cost, so the probe pays it.
            clock = Stopwatch()
            do { loaded = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                return RunOutcome(ok: false, seconds: 0, failure: "cannot read \(path): \(error)")
            }
            parser = XMLParser(data: loaded!)
        default:
            return RunOutcome(ok: false, seconds: 0, failure: "\(variant.rawValue) cannot read this input")
        }
        let delegate = FoundationDelegate(format: format, startNanos: clock.wallStart)
        parser.shouldProcessNamespaces = true
        parser.delegate = delegate
        let succeeded = parser.parse()
        let times = clock.read()
        var failure: String?
        if !succeeded {
            let error = parser.parserError.map { String(describing: $0) } ?? delegate.reportedError ?? "no error given"
            failure = "parse() returned false after \(delegate.work.record.tally.items) items (\(error))"
        }
        return withExtendedLifetime((delegate, loaded)) { outcome(delegate.work.record, times, failure: failure) }
    }

    // MARK: Helpers

    private static func outcome(_ record: WorkRecord, _ times: (wall: Double, cpu: Double), failure: String?) -> RunOutcome {
        RunOutcome(ok: failure == nil, seconds: times.wall, cpuSeconds: times.cpu,
                   firstItemSeconds: record.firstItemNanos == 0 ? nil : Double(record.firstItemNanos) / 1e9,
                   items: record.tally.items, tally: record.tally, failure: failure)
    }

    /// Feeds `input` to a push parser in `chunkSize` pieces; returns the failure, if any.
    private static func feed(_ input: Input, chunkSize: Int, generated: inout FeedManifest?,
                             parse: (UnsafeRawBufferPointer) throws -> Void, finish: () throws -> Void) -> String? {
        do {
            switch input {
            case .memory(let data):
                try data.withUnsafeBytes { (all: UnsafeRawBufferPointer) in
                    var offset = 0
                    while offset < all.count {
                        let end = min(offset + chunkSize, all.count)
                        try parse(UnsafeRawBufferPointer(rebasing: all[offset..<end]))
                        offset = end
                    }
                }
            case .file(let path):
                let fd = open(path, O_RDONLY)
                guard fd >= 0 else { return "cannot open \(path)" }
                defer { close(fd) }
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
                defer { buffer.deallocate() }
                while true {
                    let count = read(fd, buffer.baseAddress, chunkSize)
                    if count < 0 && errno == EINTR { continue }
                    guard count >= 0 else { return "reading \(path) failed: errno \(errno)" }
                    if count == 0 { break }
                    try parse(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                }
            case .generated(let generator):
                generated = try generator.generate(chunkSize: chunkSize, into: parse)
            }
            try finish()
            return nil
        } catch {
            return String(describing: error)
        }
    }

    /// Time to the first item's start tag for the C no-op, measured in a separate parse that stops there (so the
    /// timed no-op run keeps handlers that do nothing at all).
    static func cFirstItemSeconds(_ data: Data, format: FeedFormat, chunkSize: Int) -> Double? {
        let nanos = data.withUnsafeBytes { bytes in
            cexpat_noop_first_element_ns(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count, chunkSize,
                                         format == .rss ? "item" : "entry")
        }
        return nanos < 0 ? nil : Double(nanos) / 1e9
    }
}
