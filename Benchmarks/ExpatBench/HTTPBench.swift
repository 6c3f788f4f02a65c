import ExpatXML
import Fetch
import Foundation
import Support
import XMLFetching
import Syndication
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
import TestSupport
#endif

/// The ways of getting a feed over HTTP that the benchmark compares.
enum HTTPVariant: String, CaseIterable, Codable, Sendable {
    /// Fetch's `Fetcher` (libcurl) → Syndication's `FeedParser`, parsing each chunk as it arrives: the product's path.
    case pipeline = "pipeline"
    /// The same, with `Content-Encoding: gzip` (nginx `gzip_static`), inflated by Fetch as it streams.
    case pipelineGzip = "pipeline-gz"
    /// `ExpatXMLParser.parse(contentsOf:delegate:)`, the URL entry point, doing the String-API work (title, link, guid,
    /// date per item): the like-for-like rival of `XMLParser(contentsOf:)`.
    case expatURL = "expat-contentsof"
    /// Foundation's `XMLParser(contentsOf:)` with the same delegate work.
    case foundationContentsOf = "xmlparser-contentsof"
    /// `URLSession` downloads the whole body, then `XMLParser(data:)` parses it.
    case urlSessionData = "urlsession-xmlparser-data"

    var title: String {
        switch self {
        case .pipeline: "Fetcher → Syndication (streaming, full articles)"
        case .pipelineGzip: "Fetcher → Inflater → Syndication (gzip)"
        case .expatURL: "ExpatXMLParser.parse(contentsOf:) String API"
        case .foundationContentsOf: "Foundation XMLParser(contentsOf:)"
        case .urlSessionData: "URLSession download, then XMLParser(data:)"
        }
    }

    /// The nginx location it fetches from, at full speed or rate-limited.
    func location(slow: Bool) -> String {
        switch (self, slow) {
        case (.pipelineGzip, false): "gz"
        case (.pipelineGzip, true): "slow-gz"
        case (_, false): "plain"
        case (_, true): "slow"
        }
    }

    /// `/LOCATION/NAME` for a fixture served by the benchmark's nginx.
    func path(of fixture: Fixture, slow: Bool) -> String {
        "/\(location(slow: slow))/\((fixture.path as NSString).lastPathComponent)"
    }

    /// `limit_rate` of the slow locations, bytes a second.
    static let slowRate = 1 << 20

    /// The benchmark's nginx, on 127.0.0.1 only, serving `files` (and their `.gz` copies) by base name through
    /// symbolic links, at these locations:
    /// - `/plain/`: the file as it is, no compression;
    /// - `/gz/`: the precompressed `.gz` beside the file (`gzip_static`), `Content-Encoding: gzip`, to a client that asks;
    /// - `/slow/` and `/slow-gz/`: the same, at most 1 MiB/s per connection (`limit_rate`).
    static func startNginx(serving files: [String]) throws -> NginxServer {
        var configuration = NginxServer.Configuration(gzip: false, accessLog: false)
        configuration.keepaliveRequests = 100_000
        configuration.locations = [
            .init("/plain/"),
            .init("/gz/", gzipStatic: true),
            .init("/slow/", limitRate: slowRate),
            .init("/slow-gz/", gzipStatic: true, limitRate: slowRate),
        ]
        let server = try NginxServer(configuration)
        for file in files { try server.link(file) }
        return server
    }
}

/// One fetch-and-parse, timed from before the request is made.
struct HTTPOutcome: Codable {
    var ok: Bool
    var failure: String?
    var totalSeconds: Double
    /// The first body bytes handed to the parser (streaming variants only).
    var firstByteSeconds: Double?
    /// The first start tag (the root element).
    var firstElementSeconds: Double?
    /// The first complete article (Syndication) or the first item's end tag (the delegate variants).
    var firstArticleSeconds: Double?
    /// Decoded body bytes received when the first article was complete, and in how many deliveries (streaming only).
    var bytesAtFirstArticle: Int64?
    var chunksAtFirstArticle: Int?
    var items: Int
    var tally: WorkTally?
    /// Bytes on the wire (the pipeline knows them: compressed for gzip).
    var wireBytes: Int64?
}

// MARK: Running one variant

enum HTTPRunner {
    /// One fetcher for the whole run: kept-alive connections, as URLSession keeps its own.
    static let fetcher = Fetcher()
    /// One session for the whole run (ephemeral: no disk cache).
    static let session = URLSession(configuration: .ephemeral)

    static func run(_ variant: HTTPVariant, url: URL, format: FeedFormat) -> HTTPOutcome {
        switch variant {
        case .pipeline, .pipelineGzip: return runPipeline(url: url)
        case .expatURL: return runExpatURL(url: url, format: format)
        case .foundationContentsOf: return runContentsOf(url: url, format: format)
        case .urlSessionData: return runURLSession(url: url, format: format)
        }
    }

    private static func runPipeline(url: URL) -> HTTPOutcome {
        let start = monotonicNanos()
        let consumer = TimedFeedConsumer(start: start)
        let result = fetcher.fetch(FetchRequest(url: url), into: consumer)
        let total = seconds(since: start)
        var failure: String?
        if !result.isOK { failure = result.error.map { String(describing: $0) } ?? "not ok" }
        return HTTPOutcome(ok: failure == nil, failure: failure, totalSeconds: total,
                           firstByteSeconds: consumer.firstByte.map { seconds($0, from: start) },
                           firstElementSeconds: consumer.firstElement.map { seconds($0, from: start) },
                           firstArticleSeconds: consumer.record.firstArticle.map { seconds($0, from: start) },
                           bytesAtFirstArticle: consumer.record.bytesAtFirstArticle, chunksAtFirstArticle: consumer.record.chunksAtFirstArticle,
                           items: consumer.record.tally.items, tally: consumer.record.tally, wireBytes: result.bodyBytes)
    }

    private static func runExpatURL(url: URL, format: FeedFormat) -> HTTPOutcome {
        let start = monotonicNanos()
        let delegate = TimedExpatDelegate(format: format, start: start)
        var failure: String?
        do {
            let result = try ExpatXMLParser.parse(contentsOf: url, delegate: delegate, using: fetcher)
            if !result.isOK { failure = "not ok" }
        } catch {
            failure = String(describing: error)
        }
        let total = seconds(since: start)
        return delegate.timing.outcome(total: total, failure: failure, start: start)
    }

    private static func runContentsOf(url: URL, format: FeedFormat) -> HTTPOutcome {
        let start = monotonicNanos()
        let delegate = TimedFoundationDelegate(format: format, start: start)
        // On Linux this downloads the whole body (Data(contentsOf:) through FoundationNetworking), then parses it.
        guard let parser = XMLParser(contentsOf: url) else {
            return HTTPOutcome(ok: false, failure: "XMLParser(contentsOf:) returned nil", totalSeconds: seconds(since: start), items: 0)
        }
        parser.shouldProcessNamespaces = true
        parser.delegate = delegate
        let succeeded = parser.parse()
        let total = seconds(since: start)
        let failure = succeeded ? nil : "parse() returned false after \(delegate.timing.work.record.tally.items) items ("
            + (parser.parserError.map { String(describing: $0) } ?? delegate.reportedError ?? "no error given") + ")"
        return withExtendedLifetime(parser) { delegate.timing.outcome(total: total, failure: failure, start: start) }
    }

    private static func runURLSession(url: URL, format: FeedFormat) -> HTTPOutcome {
        let start = monotonicNanos()
        let box = Lock<(Data?, String?)>((nil, nil))
        let done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: url) { data, response, error in
            var failure = error.map { String(describing: $0) }
            if failure == nil, let status = (response as? HTTPURLResponse)?.statusCode, status != 200 { failure = "HTTP \(status)" }
            box.withLock { $0 = (data, failure) }
            done.signal()
        }
        task.resume()
        done.wait()
        let (data, downloadFailure) = box.withLock { $0 }
        let downloaded = seconds(since: start)
        guard let data, downloadFailure == nil else {
            return HTTPOutcome(ok: false, failure: downloadFailure ?? "no data", totalSeconds: downloaded, items: 0)
        }
        let delegate = TimedFoundationDelegate(format: format, start: start)
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.delegate = delegate
        let succeeded = parser.parse()
        let total = seconds(since: start)
        let failure = succeeded ? nil : "parse() returned false after \(delegate.timing.work.record.tally.items) items ("
            + (parser.parserError.map { String(describing: $0) } ?? delegate.reportedError ?? "no error given") + ")"
        var outcome = delegate.timing.outcome(total: total, failure: failure, start: start)
        outcome.firstByteSeconds = nil
        outcome.wireBytes = Int64(data.count)
        return outcome
    }

    static func seconds(since start: UInt64) -> Double { Double(monotonicNanos() - start) / 1e9 }
    static func seconds(_ nanos: UInt64, from start: UInt64) -> Double { Double(nanos &- start) / 1e9 }
}

// MARK: Consumers and delegates that keep the time

/// What the pipeline's article callback records.
final class PipelineRecord {
    var tally = WorkTally()
    var firstArticle: UInt64?
    var bytesAtFirstArticle: Int64?
    var chunksAtFirstArticle: Int?
}

/// Stops looking after the first start tag.
final class FirstElementHandler: XMLEventHandler {
    var seen: UInt64?
    func startElement(_ name: XMLName, attributes: XMLAttributes) {
        if seen == nil { seen = monotonicNanos() }
    }
}

/// Feeds the body into a `FeedParser` as it arrives, noting when the first bytes, element and article came.
///
/// The first element is seen by a second, bare ExpatXML parser over the same first bytes, dropped as soon as it has
/// seen one start tag (FeedParser reports articles, not elements).
final class TimedFeedConsumer: FetchConsumer {
    let start: UInt64
    let record = PipelineRecord()
    var firstByte: UInt64?
    var firstElement: UInt64?
    private var parser: FeedParser?
    private var sniffer: XMLPushParser?
    private let sniffHandler = FirstElementHandler()
    private let progress = ProgressBox()

    init(start: UInt64) {
        self.start = start
    }

    func fetchDidReceiveResponse(_ response: FetchResponse) throws {
        var configuration = FeedParserConfiguration()
        if let charset = response.charset { configuration.xml.charsetHint = charset }
        let record = self.record, progress = self.progress
        parser = FeedParser(source: response.url.absoluteString, baseURL: response.url.absoluteString,
                            configuration: configuration) { article, _ in
            if record.firstArticle == nil {
                record.firstArticle = monotonicNanos()
                record.bytesAtFirstArticle = progress.bytes
                record.chunksAtFirstArticle = progress.chunks
            }
            record.tally.items += 1
            record.tally.titleBytes += article.title?.utf8.count ?? 0
            record.tally.linkBytes += article.link?.utf8.count ?? 0
            record.tally.guidBytes += article.id.utf8.count
        }
        sniffer = XMLPushParser(handler: sniffHandler)
    }

    /// The body's progress, shared with the article callback.
    final class ProgressBox {
        var bytes: Int64 = 0
        var chunks = 0
    }

    func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws {
        if firstByte == nil { firstByte = monotonicNanos() }
        progress.bytes += Int64(bytes.count)
        progress.chunks += 1
        if let sniffer {
            try? sniffer.parse(bytes)
            if let seen = sniffHandler.seen {
                firstElement = seen
                self.sniffer = nil
            }
        }
        try parser?.parse(bytes)
    }

    func fetchDidFinish() throws {
        try parser?.finish()
    }
}

/// Times shared by the String delegates: the first start tag, the first item's end, and the work itself.
struct DelegateTiming {
    var work: StringWork
    var firstElement: UInt64?
    var firstArticle: UInt64?

    init(format: FeedFormat, start: UInt64) {
        work = StringWork(format: format, startNanos: start)
    }

    @inline(__always) mutating func start(_ name: String, _ namespaceURI: String?, _ attributes: [String: String]) {
        if firstElement == nil { firstElement = monotonicNanos() }
        work.start(name, namespaceURI, attributes)
    }

    @inline(__always) mutating func end(_ name: String, _ namespaceURI: String?) {
        work.end(name, namespaceURI)
        if firstArticle == nil && work.record.tally.items > 0 { firstArticle = monotonicNanos() }
    }

    func outcome(total: Double, failure: String?, start: UInt64) -> HTTPOutcome {
        HTTPOutcome(ok: failure == nil, failure: failure, totalSeconds: total,
                    firstElementSeconds: firstElement.map { HTTPRunner.seconds($0, from: start) },
                    firstArticleSeconds: firstArticle.map { HTTPRunner.seconds($0, from: start) },
                    items: work.record.tally.items, tally: work.record.tally)
    }
}

final class TimedExpatDelegate: ExpatXMLParserDelegate {
    var timing: DelegateTiming

    init(format: FeedFormat, start: UInt64) {
        timing = DelegateTiming(format: format, start: start)
    }

    func shouldProcessAttributes(forElement elementName: String, namespaceURI: String?) -> Bool {
        timing.work.format == .atom && elementName == "link"
    }

    func parser(_ parser: ExpatXMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String]) {
        timing.start(elementName, namespaceURI, attributeDict)
        parser.reportsCharacters = timing.work.wantsText
    }

    func parser(_ parser: ExpatXMLParser, foundCharacters string: String) {
        timing.work.characters(string)
    }

    func parser(_ parser: ExpatXMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        timing.end(elementName, namespaceURI)
        parser.reportsCharacters = false
    }
}

final class TimedFoundationDelegate: NSObject, XMLParserDelegate {
    var timing: DelegateTiming
    var reportedError: String?

    init(format: FeedFormat, start: UInt64) {
        timing = DelegateTiming(format: format, start: start)
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String]) {
        timing.start(elementName, namespaceURI, attributeDict)
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        timing.work.characters(string)
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        timing.end(elementName, namespaceURI)
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        if reportedError == nil { reportedError = String(describing: parseError) }
    }
}

// MARK: The section

struct HTTPVariantResult: Codable {
    var variant: HTTPVariant
    var title: String
    var url: String
    var ok: Bool
    var failure: String?
    var items: Int?
    var totalMs: Summary
    var firstByteMs: Summary?
    var firstElementMs: Summary?
    var firstArticleMs: Summary?
    var megabytesPerSecond: Double
    /// Total time over XMLParser(contentsOf:)'s in the same round.
    var ratioToContentsOf: Summary?
    var bytesAtFirstArticle: Int64?
    var chunksAtFirstArticle: Int?
    var wireBytes: Int64?
    /// One run in a fresh child process (`--probe-http`), ru_maxrss from wait4.
    var peakRSSKiB: Int?
}

struct HTTPRunResult: Codable {
    var name: String
    var feed: String
    var bytes: Int
    var items: Int
    var rateLimitBytesPerSecond: Int?
    var rounds: Int
    var warmupRounds: Int
    var variants: [HTTPVariantResult]
}

extension Benchmark {
    /// Full-speed and rate-limited fetches of the same feeds by every HTTP variant, paired rounds.
    func runHTTP(server: NginxServer, fast: Fixture, slow: Fixture) -> [HTTPRunResult] {
        let fastRounds = options.quick ? min(options.rounds, 5) : max(5, min(options.rounds, 7))
        let slowRounds = options.quick ? 1 : 5
        return [
            timeHTTP(server: server, fixture: fast, slow: false, rounds: fastRounds, warmup: 1),
            timeHTTP(server: server, fixture: slow, slow: true, rounds: slowRounds, warmup: options.quick ? 0 : 1),
        ]
    }

    private func timeHTTP(server: NginxServer, fixture: Fixture, slow: Bool, rounds: Int, warmup: Int) -> HTTPRunResult {
        let name = slow ? "http-rate-limited" : "http-loopback"
        var outcomes: [HTTPVariant: [HTTPOutcome]] = [:]
        for round in 0..<(warmup + rounds) {
            let counted = round >= warmup
            log("\(name) \(fixture.name): \(counted ? "round \(round - warmup + 1)/\(rounds)" : "warm-up")…")
            for variant in HTTPVariant.allCases {
                var outcome = HTTPRunner.run(variant, url: server.url(variant.path(of: fixture, slow: slow)),
                                             format: fixture.manifest.format)
                Self.verify(&outcome, variant: variant, manifest: fixture.manifest)
                if counted { outcomes[variant, default: []].append(outcome) }
            }
        }
        let reference = outcomes[.foundationContentsOf]!.map(\.totalSeconds)
        let variants = HTTPVariant.allCases.map { variant -> HTTPVariantResult in
            let runs = outcomes[variant]!
            let totals = runs.map(\.totalSeconds)
            let failure = runs.first { !$0.ok }?.failure
            let url = server.url(variant.path(of: fixture, slow: slow))
            var peak: Int?
            if !slow && sectionsIncludeMemory {
                log("\(name): peak-RSS probe \(variant.rawValue)…")
                let probe = Probe.spawnMeasured(["--probe-http", variant.rawValue, url.absoluteString])
                if probe.failure == nil || probe.maxRSSKiB > 0 { peak = probe.maxRSSKiB }
            }
            return HTTPVariantResult(
                variant: variant, title: variant.title, url: url.absoluteString, ok: failure == nil, failure: failure,
                items: runs.last?.items, totalMs: Summary(totals)!.scaled(by: 1000),
                firstByteMs: Summary(runs.compactMap(\.firstByteSeconds))?.scaled(by: 1000),
                firstElementMs: Summary(runs.compactMap(\.firstElementSeconds))?.scaled(by: 1000),
                firstArticleMs: Summary(runs.compactMap(\.firstArticleSeconds))?.scaled(by: 1000),
                megabytesPerSecond: Double(fixture.manifest.bytes) / Summary(totals)!.median / 1e6,
                ratioToContentsOf: Summary(zip(totals, reference).map { $0 / $1 }),
                bytesAtFirstArticle: runs.compactMap(\.bytesAtFirstArticle).max(),
                chunksAtFirstArticle: runs.compactMap(\.chunksAtFirstArticle).max(),
                wireBytes: runs.last?.wireBytes, peakRSSKiB: peak)
        }
        return HTTPRunResult(name: name, feed: fixture.name, bytes: fixture.manifest.bytes, items: fixture.manifest.items,
                             rateLimitBytesPerSecond: slow ? HTTPVariant.slowRate : nil, rounds: rounds, warmupRounds: warmup,
                             variants: variants)
    }

    var sectionsIncludeMemory: Bool { options.sections.contains(.memory) }

    /// A run passes only when it got every item with exactly the generator's fields.
    static func verify(_ outcome: inout HTTPOutcome, variant: HTTPVariant, manifest: FeedManifest) {
        guard outcome.ok else { return }
        guard outcome.items == manifest.items else {
            outcome.ok = false
            outcome.failure = "saw \(outcome.items) items, expected \(manifest.items)"
            return
        }
        guard var tally = outcome.tally else { return }
        // Syndication keeps parsed dates, not their text: compare the rest.
        if variant == .pipeline || variant == .pipelineGzip { tally.pubDateBytes = manifest.expected.pubDateBytes }
        if tally != manifest.expected {
            outcome.ok = false
            outcome.failure = "extracted fields differ from the generator's: \(tally) vs \(manifest.expected)"
        }
    }
}

extension Probe {
    /// `--probe-http VARIANT URL`: one fetch and parse in this fresh process, one JSON line (an `HTTPOutcome`).
    static func runHTTP(variant: HTTPVariant, url: String) -> Int32 {
        guard let url = URL(string: url), url.host == "127.0.0.1" else {
            FileHandle.standardError.write(Data("feedingest-bench: --probe-http takes an http://127.0.0.1 URL\n".utf8))
            return 2
        }
        let format: FeedFormat = url.lastPathComponent.hasPrefix("atom") ? .atom : .rss
        let outcome = HTTPRunner.run(variant, url: url, format: format)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let report = ProbeReport(variant: .idle, outcome: RunOutcome(ok: outcome.ok, seconds: outcome.totalSeconds,
                                                                      items: outcome.items, failure: outcome.failure),
                                 vmHWMKiB: vmHWMKiB())
        guard let json = try? encoder.encode(report) else { return 3 }
        FileHandle.standardOutput.write(json + Data("\n".utf8))
        return outcome.ok ? 0 : 1
    }
}
