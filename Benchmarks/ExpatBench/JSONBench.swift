import CYajlNoop
import Foundation
import StreamingJSON
import Syndication
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The `json` section: a 20 MB JSON Feed (JSONFeedGenerator, 17,000 items) in memory, our streaming path against
/// Foundation's `JSONSerialization` and `JSONDecoder` on the same bytes, with raw yajl and no-op callbacks as the limit;
/// then (unless --skip-memory) the peak RSS of each in a child process, 20 MB and (without --quick) 200 MB.
///
/// Every variant but the no-op ones copies each item's title, url, id and date into `String`s and is checked against
/// the generator's tally; the no-op ones are checked by their object count. Syndication makes whole articles (content,
/// summary, authors, tags, attachments); JSONDecoder decodes the same fields into a `Codable` struct; JSONSerialization
/// builds its whole tree of every value anyway.
enum JSONBench {
    enum Variant: String, Codable, CaseIterable {
        case cNoop = "c-yajl-noop"
        case events = "streamingjson-events"
        case syndication = "syndication-json"
        case serialization = "foundation-jsonserialization"
        case decoder = "foundation-jsondecoder"
        /// The probe binary doing nothing: the floor of the peak-RSS figures.
        case idle

        var title: String {
            switch self {
            case .cNoop: return "C yajl, no-op callbacks"
            case .events: return "StreamingJSON events, no-op handler"
            case .syndication: return "Syndication: JSON Feed → Article (streaming)"
            case .serialization: return "Foundation JSONSerialization"
            case .decoder: return "Foundation JSONDecoder (Codable)"
            case .idle: return "idle (this binary's floor)"
            }
        }

        /// Whether it reads the document as it arrives (64 KiB chunks), rather than needing all of it.
        var streams: Bool { [.cNoop, .events, .syndication].contains(self) }
    }

    struct Outcome: Codable {
        var ok: Bool
        var seconds: Double
        var firstItemSeconds: Double?
        /// Items (or, for the no-op variants, objects) counted.
        var count: Int
        var failure: String?
    }

    /// About 20 MB (1.18 KB an item), and about 200 MB.
    static let items = 17_000
    static let largeItems = 170_000

    // MARK: Fixture

    /// The cached fixture (`jsonfeed-ITEMS-vN.json` and its manifest), generated streaming when missing or stale.
    static func fixture(items: Int, directory: String) throws -> (path: String, manifest: JSONFeedManifest) {
        let base = "\(directory)/jsonfeed-\(items)-v\(JSONFeedGenerator.version)"
        let path = base + ".json", manifestPath = base + ".manifest.json"
        if let data = FileManager.default.contents(atPath: manifestPath),
           let manifest = try? JSONDecoder().decode(JSONFeedManifest.self, from: data), manifest.items == items,
           manifest.generatorVersion == JSONFeedGenerator.version,
           (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue == manifest.bytes {
            return (path, manifest)
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        log("generating \(path) (\(items) items)…")
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw FixtureError(message: "cannot create \(path)")
        }
        defer { try? handle.close() }
        let manifest = try JSONFeedGenerator(items: items).generate { chunk in try handle.write(contentsOf: Data(chunk)) }
        try JSONEncoder().encode(manifest).write(to: URL(fileURLWithPath: manifestPath))
        return (path, manifest)
    }

    // MARK: Variants

    /// Counts objects, and notes when the first item (an object at depth 3) closes.
    final class NoOpHandler: JSONEventHandler {
        var objects = 0
        var depth = 0
        var firstItemNanos: UInt64 = 0
        func startObject() { objects += 1; depth += 1 }
        func endObject() {
            if depth == 3 && firstItemNanos == 0 { firstItemNanos = monotonicNanos() }
            depth -= 1
        }
        func startArray() { depth += 1 }
        func endArray() { depth -= 1 }
    }

    struct DecodedFeed: Decodable {
        struct Person: Decodable { var name: String? }
        struct Attachment: Decodable {
            var url: String
            var mime_type: String?
            var size_in_bytes: Int64?
            var duration_in_seconds: Double?
        }
        struct Item: Decodable {
            var id: String
            var url: String?
            var title: String?
            var summary: String?
            var content_html: String?
            var date_published: String?
            var date_modified: String?
            var authors: [Person]?
            var tags: [String]?
            var attachments: [Attachment]?
        }
        var version: String
        var title: String?
        var items: [Item]
    }

    /// Runs one variant over `data` (in memory, 64 KiB chunks for the streaming ones) and checks it.
    static func run(_ variant: Variant, data: Data, manifest: JSONFeedManifest, chunkSize: Int = 64 * 1024) -> Outcome {
        let start = monotonicNanos()
        var tally = WorkTally()
        var firstItem: UInt64 = 0
        var failure: String?
        var count = 0
        func add(title: String?, link: String?, id: String?, date: String?) {
            tally.items += 1
            tally.titleBytes += title?.utf8.count ?? 0
            tally.linkBytes += link?.utf8.count ?? 0
            tally.guidBytes += id?.utf8.count ?? 0
            tally.pubDateBytes += date?.utf8.count ?? 0
            if firstItem == 0 { firstItem = monotonicNanos() }
        }
        switch variant {
        case .idle:
            return Outcome(ok: true, seconds: 0, count: 0)
        case .cNoop:
            count = data.withUnsafeBytes { cyajl_noop_parse($0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count, chunkSize) }
            if count != manifest.objects { failure = "counted \(count) objects, expected \(manifest.objects)" }
        case .events:
            let handler = NoOpHandler()
            let parser = JSONPushParser(handler: handler)
            do {
                try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws in
                    var offset = 0
                    while offset < bytes.count {
                        try parser.parse(UnsafeRawBufferPointer(rebasing: bytes[offset..<min(bytes.count, offset + chunkSize)]))
                        offset += chunkSize
                    }
                }
                try parser.finish()
            } catch { failure = "\(error)" }
            count = handler.objects
            firstItem = handler.firstItemNanos
            if failure == nil && count != manifest.objects { failure = "counted \(count) objects, expected \(manifest.objects)" }
        case .syndication:
            let parser = FeedParser(source: "bench.json") { article, _ in
                add(title: article.title, link: article.link, id: article.id, date: article.published.map(FeedDate.rfc3339))
            }
            do {
                try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws in
                    var offset = 0
                    while offset < bytes.count {
                        try parser.parse(UnsafeRawBufferPointer(rebasing: bytes[offset..<min(bytes.count, offset + chunkSize)]))
                        offset += chunkSize
                    }
                }
                try parser.finish()
            } catch { failure = "\(error)" }
        case .serialization:
            do {
                let root = try JSONSerialization.jsonObject(with: data) as? [String: Any]
                for case let item as [String: Any] in root?["items"] as? [Any] ?? [] {
                    add(title: item["title"] as? String, link: item["url"] as? String, id: item["id"] as? String,
                        date: item["date_published"] as? String)
                }
            } catch { failure = "\(error)" }
        case .decoder:
            do {
                let feed = try JSONDecoder().decode(DecodedFeed.self, from: data)
                for item in feed.items { add(title: item.title, link: item.url, id: item.id, date: item.date_published) }
            } catch { failure = "\(error)" }
        }
        let seconds = Double(monotonicNanos() - start) / 1e9
        if !variant.streams || variant == .syndication {
            count = tally.items
            if failure == nil && tally != manifest.expected { failure = "extracted \(tally), expected \(manifest.expected)" }
        }
        if variant == .cNoop {
            let nanos = data.withUnsafeBytes {
                cyajl_noop_first_item_ns($0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count, chunkSize)
            }
            return Outcome(ok: failure == nil, seconds: seconds, firstItemSeconds: nanos > 0 ? Double(nanos) / 1e9 : nil,
                           count: count, failure: failure)
        }
        return Outcome(ok: failure == nil, seconds: seconds, firstItemSeconds: firstItem > 0 ? Double(firstItem - start) / 1e9 : nil,
                       count: count, failure: failure)
    }

    // MARK: Probe (child side)

    /// `--probe-json VARIANT FILE`: parse FILE once in this (fresh, small) process, print an `Outcome` line. Streaming
    /// variants read the file in 64 KiB chunks; Foundation's must load it whole first.
    static func probe(variant: Variant, path: String) -> Int32 {
        let manifestPath = String(path.dropLast(".json".count)) + ".manifest.json"
        guard let manifestData = FileManager.default.contents(atPath: manifestPath),
              let manifest = try? JSONDecoder().decode(JSONFeedManifest.self, from: manifestData) else {
            log("feedingest-bench: no manifest at \(manifestPath)")
            return 2
        }
        let start = monotonicNanos()
        var outcome: Outcome
        switch variant {
        case .cNoop:
            let fd = open(path, O_RDONLY)
            let count = fd < 0 ? -1 : cyajl_noop_parse_fd(fd, 64 * 1024)
            if fd >= 0 { close(fd) }
            outcome = Outcome(ok: count == manifest.objects, seconds: 0, count: count)
        case .events, .syndication:
            var tally = WorkTally()
            var objects = 0
            var failure: String?
            do {
                if variant == .events {
                    let handler = NoOpHandler()
                    try JSONPushParser(handler: handler).parse(contentsOfFile: path)
                    objects = handler.objects
                } else {
                    let summary = FeedParser.parse(contentsOfFile: path) { article, _ in
                        tally.items += 1
                        tally.titleBytes += article.title?.utf8.count ?? 0
                        tally.linkBytes += article.link?.utf8.count ?? 0
                        tally.guidBytes += article.id.utf8.count
                        tally.pubDateBytes += article.published.map(FeedDate.rfc3339)?.utf8.count ?? 0
                    }
                    if let error = summary.error { failure = "\(error)" }
                }
            } catch { failure = "\(error)" }
            let ok = failure == nil && (variant == .events ? objects == manifest.objects : tally == manifest.expected)
            outcome = Outcome(ok: ok, seconds: 0, count: variant == .events ? objects : tally.items, failure: failure)
        case .serialization, .decoder:
            guard let data = FileManager.default.contents(atPath: path) else {
                log("feedingest-bench: cannot read \(path)")
                return 2
            }
            outcome = run(variant, data: data, manifest: manifest)
        case .idle:
            outcome = Outcome(ok: true, seconds: 0, count: 0)
        }
        outcome.seconds = Double(monotonicNanos() - start) / 1e9
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let json = try? encoder.encode(outcome) else { return 3 }
        FileHandle.standardOutput.write(json + Data("\n".utf8))
        return outcome.ok ? 0 : 1
    }

    // MARK: Parent side

    struct VariantResult: Codable {
        var variant: Variant
        var title: String
        var ok: Bool
        var failure: String?
        var count: Int
        var wallMs: Summary
        var megabytesPerSecond: Double
        /// Per round, this variant's time over raw yajl's, then the median.
        var ratioToC: Summary?
        /// Per round, JSONSerialization's time (and JSONDecoder's) over this variant's: how many times faster it is.
        var speedupOverSerialization: Summary?
        var speedupOverDecoder: Summary?
        var firstItemMs: Summary?
    }

    struct MemoryResult: Codable {
        var variant: Variant
        var feed: String
        var ok: Bool
        var maxRSSKiB: Int
        var seconds: Double?
        var failure: String?
    }

    struct Result: Codable {
        var bytes: Int
        var items: Int
        var variants: [VariantResult]
        var memory: [MemoryResult]
        var ok: Bool { variants.allSatisfy(\.ok) && memory.allSatisfy(\.ok) }
    }

    static func run(options: BenchmarkOptions) throws -> Result {
        let fixture = try fixture(items: items, directory: options.fixturesDirectory)
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.path))
        let timed: [Variant] = [.cNoop, .events, .syndication, .serialization, .decoder]
        var outcomes: [Variant: [Outcome]] = [:]
        for round in 0..<(options.warmupRounds + options.rounds) {
            for variant in timed {
                let outcome = run(variant, data: data, manifest: fixture.manifest, chunkSize: options.chunkSize)
                if round >= options.warmupRounds { outcomes[variant, default: []].append(outcome) }
            }
        }
        let c = outcomes[.cNoop]!.map(\.seconds)
        let serialization = outcomes[.serialization]!.map(\.seconds)
        let decoder = outcomes[.decoder]!.map(\.seconds)
        var variants: [VariantResult] = []
        for variant in timed {
            let runs = outcomes[variant]!
            let seconds = runs.map(\.seconds)
            let wall = Summary(seconds)!
            let failed = runs.first { !$0.ok }
            variants.append(VariantResult(
                variant: variant, title: variant.title, ok: failed == nil, failure: failed?.failure, count: runs.last?.count ?? 0,
                wallMs: wall.scaled(by: 1000), megabytesPerSecond: Double(fixture.manifest.bytes) / wall.median / 1e6,
                ratioToC: Summary(zip(seconds, c).map { $0 / $1 }),
                speedupOverSerialization: Summary(zip(serialization, seconds).map { $0 / $1 }),
                speedupOverDecoder: Summary(zip(decoder, seconds).map { $0 / $1 }),
                firstItemMs: Summary(runs.compactMap(\.firstItemSeconds))?.scaled(by: 1000)))
        }

        var memory: [MemoryResult] = []
        if !options.skipMemory {
            var feeds = [("jsonfeed-20MB", fixture.path)]
            if !options.quick { feeds.append(("jsonfeed-200MB", try Self.fixture(items: largeItems, directory: options.fixturesDirectory).path)) }
            for (name, path) in feeds {
                for variant in [Variant.idle] + timed {
                    if name.hasSuffix("200MB") && variant == .decoder { continue }  // a minute of JSONDecoder says nothing new
                    memory.append(measure(variant, feed: name, path: path))
                }
            }
        }
        return Result(bytes: fixture.manifest.bytes, items: fixture.manifest.items, variants: variants, memory: memory)
    }

    /// One probe in a child, through the `--measure` middle process (see `Probe` for why): its ru_maxrss and outcome.
    static func measure(_ variant: Variant, feed: String, path: String) -> MemoryResult {
        let middle = Probe.spawn(["--measure", "--probe-json", variant.rawValue, path])
        guard let line = middle.output, let measurement = try? JSONDecoder().decode(Probe.Measurement.self, from: Data(line.utf8)) else {
            return MemoryResult(variant: variant, feed: feed, ok: false, maxRSSKiB: 0, failure: middle.failure ?? "no measurement")
        }
        let outcome = measurement.output.flatMap { try? JSONDecoder().decode(Outcome.self, from: Data($0.utf8)) }
        return MemoryResult(variant: variant, feed: feed, ok: outcome?.ok == true && measurement.exitStatus == 0,
                            maxRSSKiB: measurement.maxRSSKiB, seconds: outcome?.seconds,
                            failure: outcome?.failure ?? measurement.failure ?? (outcome == nil ? "the probe printed no outcome" : nil))
    }

    // MARK: Table

    static func table(_ result: Result?, rounds: Int) -> [String] {
        guard let result else { return [] }
        var lines = ["", "JSON Feed \(Report.mb(result.bytes)) MB, \(Report.grouped(result.items)) items (JSONFeedGenerator), in memory, "
            + "64 KiB chunks for the streaming variants; median [min-max] over \(rounds) paired rounds"]
        var rows = [["variant", "status", "wall ms", "MB/s", "x C yajl", "x faster than JSONSerialization", "x faster than JSONDecoder",
                     "first item ms"]]
        for variant in result.variants {
            rows.append([
                variant.title, variant.ok ? "ok \(Report.grouped(variant.count))" : "FAILED",
                "\(Report.fixed(variant.wallMs.median, 1)) [\(Report.fixed(variant.wallMs.min, 1))-\(Report.fixed(variant.wallMs.max, 1))]",
                Report.fixed(variant.megabytesPerSecond, 1),
                variant.ratioToC.map { Report.fixed($0.median, 2) } ?? "-",
                variant.speedupOverSerialization.map { Report.fixed($0.median, 2) } ?? "-",
                variant.speedupOverDecoder.map { Report.fixed($0.median, 2) } ?? "-",
                variant.firstItemMs.map { "\(Report.fixed($0.median, 2)) [\(Report.fixed($0.min, 2))-\(Report.fixed($0.max, 2))]" } ?? "-",
            ])
        }
        lines += Report.table(rows, rightAligned: [false, false, true, true, true, true, true, true])
        lines.append("  Status counts items (objects for the no-op variants), checked against the generator. First item: from before "
            + "the parse to the first complete item (Foundation: the whole document decoded, then its first item).")
        for variant in result.variants where !variant.ok { lines.append("  \(variant.title) FAILED: \(variant.failure ?? "?")") }
        if !result.memory.isEmpty {
            lines.append("")
            lines.append("JSON Feed peak RSS: one child per variant (--probe-json), streaming variants reading the file in 64 KiB "
                + "chunks, Foundation's loading it whole; ru_maxrss from wait4(2)")
            let feeds = Report.uniqued(result.memory.map(\.feed))
            var header = ["variant"]
            for feed in feeds { header += ["\(feed) peak RSS MiB", "\(feed) s"] }
            var memoryRows = [header]
            for variant in Report.uniqued(result.memory.map(\.variant)) {
                var row = [variant.title]
                for feed in feeds {
                    guard let entry = result.memory.first(where: { $0.feed == feed && $0.variant == variant }) else { row += ["-", "-"]; continue }
                    row.append(Report.mib(entry.maxRSSKiB) + (entry.ok ? "" : " FAILED"))
                    row.append(entry.seconds.map { Report.fixed($0, 2) } ?? "-")
                }
                memoryRows.append(row)
            }
            lines += Report.table(memoryRows, rightAligned: [false] + Array(repeating: true, count: header.count - 1))
            for entry in result.memory where !entry.ok { lines.append("  \(entry.variant.title) on \(entry.feed) FAILED: \(entry.failure ?? "?")") }
        }
        return lines
    }
}
