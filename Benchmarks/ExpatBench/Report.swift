import Foundation
import TestSupport

/// The human table on stdout, then one JSON line with the same figures.
enum Report {
    static func printTables(_ report: BenchmarkReport) {
        var lines: [String] = []
        lines.append("feedingest-bench: \(report.build) build, \(report.cores) cores, \(report.chunkBytes / 1024) KiB chunks, "
            + "\(report.rounds) counted rounds after \(report.warmupRounds) warm-up\(report.quick ? " (--quick)" : "")")
        if report.build != "release" {
            lines.append("!!! DEBUG BUILD: these figures say nothing about performance !!!")
        }
        for feed in report.feeds {
            lines.append("")
            lines.append("\(feed.description): \(mb(feed.bytes)) MB, "
                + "\(grouped(feed.items)) items, \(grouped(feed.elements)) elements; in memory, every round runs every "
                + "variant once in this order; median [min-max] over \(report.rounds) rounds; ratios are per round (paired), then the median")
            var rows: [[String]] = [["variant", "status", "wall ms", "MB/s", "x C no-op", "x XMLParser(stream:)", "cpu ms", "x C (cpu)", "first item ms"]]
            var footnote = false
            for variant in feed.variants {
                let mark = variant.ok ? "" : "*"
                footnote = footnote || !variant.ok
                rows.append([
                    variant.title,
                    variant.ok ? "ok \(grouped(variant.items ?? variant.elements ?? 0))\(variant.items == nil ? " el." : "")" : "FAILED",
                    "\(fixed(variant.wallMs.median, 1)) [\(fixed(variant.wallMs.min, 1))-\(fixed(variant.wallMs.max, 1))]\(mark)",
                    fixed(variant.megabytesPerSecond, 1) + mark,
                    variant.ratioToC.map { "\(fixed($0.median, 2)) [\(fixed($0.min, 2))-\(fixed($0.max, 2))]\(mark)" } ?? "-",
                    variant.ratioToXMLParserStream.map { "\(fixed($0.median, 2))\(mark)" } ?? "-",
                    fixed(variant.cpuMs.median, 1) + mark,
                    variant.cpuRatioToC.map { "\(fixed($0.median, 2))\(mark)" } ?? "-",
                    variant.firstItemMs.map { "\(fixed($0.median, 2)) [\(fixed($0.min, 2))-\(fixed($0.max, 2))]" } ?? "-",
                ])
            }
            lines += table(rows, rightAligned: [false, false, true, true, true, true, true, true, true])
            lines.append("  Work: every variant but the C no-op copies title, link, guid and date of each item into Strings and counts items; "
                + "checked against the generator (the C no-op by its element count). The byte API skips other text with "
                + "isCollectingText; the String API asks for attributes only on Atom <link> (shouldProcessAttributes) and for text only inside those four "
                + "fields (reportsCharacters); the row below it takes every text node as a String, as a Foundation delegate must. "
                + "First item: from before the parser is created to the first item's start tag (C no-op: a separate parse that stops there; "
                + "Syndication: the first complete article). The .gz variant reads the gzip copy (\(feed.feeds == 1 ? "" : "each feed's, ")"
                + "level 6) and inflates it as it parses; its MB/s counts the decompressed bytes.")
            if footnote {
                for variant in feed.variants where !variant.ok {
                    lines.append("  * \(variant.title) FAILED: \(variant.failure ?? "?")")
                    lines.append("    (its times are until it gave up, so its ratios are not comparable)")
                }
            }
        }
        if !report.memory.isEmpty {
            lines.append("")
            lines.append("Peak RSS: one child process per variant (this binary re-executed with --probe), streaming the file "
                + "from disk in 64 KiB chunks (XMLParser(stream:) reads its own way; XMLParser(data:) must load the whole "
                + "file); ru_maxrss from wait4(2), the child's own VmHWM in parentheses. The idle row is this binary's floor "
                + "(it links libcurl and FoundationNetworking for the HTTP section); the parsers' own cost is the difference")
            let feeds = uniqued(report.memory.map(\.feed))
            var header = ["variant"]
            for feed in feeds { header += ["\(feed) peak RSS MiB", "\(feed) parse s"] }
            var rows = [header]
            for variant in uniqued(report.memory.map(\.variant)) {
                var row = [variant.title]
                for feed in feeds {
                    guard let result = report.memory.first(where: { $0.feed == feed && $0.variant == variant }) else {
                        row += ["-", "-"]
                        continue
                    }
                    let hwm = result.vmHWMKiB.map { " (\(mib($0)))" } ?? ""
                    row.append("\(mib(result.maxRSSKiB))\(hwm)\(result.ok ? "" : " FAILED")")
                    row.append(result.parseSeconds.map { fixed($0, 2) } ?? "-")
                }
                rows.append(row)
            }
            lines += table(rows, rightAligned: [false] + Array(repeating: true, count: header.count - 1))
            for result in report.memory where !result.ok {
                lines.append("  \(result.title) on \(result.feed) FAILED: \(result.failure ?? "?")")
            }
        }
        lines += httpTables(report)
        lines += commandTables(report)
        lines += HashBench.table(report.hashes, rounds: report.rounds)
        lines += JSONBench.table(report.json, rounds: report.rounds)
        lines += ProcessBench.tables(report.process, instructions: report.instructions)
        lines += targets(report)
        for (section, why) in report.skipped.sorted(by: { $0.key < $1.key }) {
            lines.append("")
            lines.append("SECTION \(section) NOT RUN: \(why)")
        }
        lines.append("")
        lines.append("total \(fixed(report.totalSeconds, 1)) s; load average \(fixed(report.loadAverage[0], 2)) at start, "
            + "\(fixed(report.loadAverage[1], 2)) at end (\(report.cores) cores: above ~1, other work disturbed the wall times)")
        print(lines.joined(separator: "\n"))
    }

    static func printJSON(_ report: BenchmarkReport) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        if let json = try? encoder.encode(report) {
            print(String(decoding: json, as: UTF8.self))
        }
    }

    // MARK: Formatting

    static func table(_ rows: [[String]], rightAligned: [Bool]) -> [String] {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.enumerated().flatMap { index, row -> [String] in
            let line = row.indices.map { column -> String in
                let padding = String(repeating: " ", count: widths[column] - row[column].count)
                return rightAligned[column] && index > 0 ? padding + row[column] : row[column] + padding
            }.joined(separator: "  ")
            let trimmed = "  " + line.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
            return index == 0 ? [trimmed, "  " + String(repeating: "-", count: widths.reduce(0, +) + 2 * (widths.count - 1))] : [trimmed]
        }
    }

    static func uniqued<T: Hashable>(_ values: [T]) -> [T] {
        var seen = Set<T>()
        return values.filter { seen.insert($0).inserted }
    }

    static func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
    static func mb(_ bytes: Int) -> String { fixed(Double(bytes) / 1e6, 2) }
    static func mib(_ kib: Int) -> String { fixed(Double(kib) / 1024, 1) }
    static func kb(_ bytes: Int) -> String { String(bytes / 1000) }
    static func spread(_ summary: Summary?, _ digits: Int = 1) -> String {
        guard let summary else { return "-" }
        return "\(fixed(summary.median, digits)) [\(fixed(summary.min, digits))-\(fixed(summary.max, digits))]"
    }
    static func grouped(_ value: Int) -> String {
        let digits = String(value)
        var result = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(character)
        }
        return result
    }
}

// MARK: HTTP, end to end, latency, targets

extension Report {
    static func httpTables(_ report: BenchmarkReport) -> [String] {
        var lines: [String] = []
        for run in report.http {
            lines.append("")
            let speed = run.rateLimitBytesPerSecond.map { "RATE-LIMITED to \(fixed(Double($0) / 1_048_576, 2)) MiB/s per connection (nginx limit_rate), "
                + "so this uses the smaller \(run.feed) feed (nginx sends the first second's worth at once, then keeps to the rate)" } ?? "full loopback speed"
            lines.append("Over HTTP, \(speed): \(run.feed), \(mb(run.bytes)) MB, \(grouped(run.items)) items, from nginx on 127.0.0.1; "
                + "\(run.rounds) counted round(s)\(run.warmupRounds > 0 ? " after \(run.warmupRounds) warm-up" : ", no warm-up"); "
                + "median [min-max] ms from before the request")
            var rows: [[String]] = [["variant", "status", "first byte", "first element", "first article", "total ms", "MB/s",
                                     "x contentsOf", "article at", "peak RSS MiB"]]
            for variant in run.variants {
                let mark = variant.ok ? "" : "*"
                rows.append([
                    variant.title,
                    variant.ok ? "ok \(grouped(variant.items ?? 0))" : "FAILED",
                    spread(variant.firstByteMs), spread(variant.firstElementMs), spread(variant.firstArticleMs),
                    spread(variant.totalMs) + mark, fixed(variant.megabytesPerSecond, 1) + mark,
                    variant.ratioToContentsOf.map { fixed($0.median, 2) + mark } ?? "-",
                    variant.bytesAtFirstArticle.map { "\(kb(Int($0))) KB, chunk \(variant.chunksAtFirstArticle ?? 0)" } ?? "-",
                    variant.peakRSSKiB.map { mib($0) } ?? "-",
                ])
            }
            lines += table(rows, rightAligned: [false, false, true, true, true, true, true, true, true, true])
            lines.append("  First byte: the first body bytes handed to the parser (streaming variants only). First element: the root's "
                + "start tag (the pipeline sees it with a bare ExpatXML parser over the same first bytes). First article: Syndication's "
                + "first complete Article, or the first item's end tag for the delegate variants. Article at: body bytes received "
                + "(decoded) and deliveries so far when the first article was complete, worst round. x contentsOf: total time over "
                + "XMLParser(contentsOf:)'s in the same round. Peak RSS: one run in a fresh child process (--probe-http).")
            for variant in run.variants where !variant.ok {
                lines.append("  * \(variant.title) FAILED: \(variant.failure ?? "?")")
            }
        }
        return lines
    }

    static func commandTables(_ report: BenchmarkReport) -> [String] {
        var lines: [String] = []
        for (title, results) in [("End to end: the built feedingest command, a fresh store each run, stdout to /dev/null; "
                                  + "peak RSS is ru_maxrss from wait4 in a small middle process", report.endToEnd),
                                 ("Latency: scripts/latency_server.py, a fresh store each run; in flight: the server's count of "
                                  + "requests waiting or being answered at once", report.latency)] where !results.isEmpty {
            lines.append("")
            lines.append(title)
            var rows: [[String]] = [["run", "status", "feeds", "MB", "wall ms", "peak RSS MiB", "in flight (max)", "requests"]]
            for result in results {
                rows.append([
                    result.description, result.ok ? "ok" : "FAILED", grouped(result.feeds), result.bytes.map { mb($0) } ?? "-",
                    spread(result.wallMs, 0), result.peakRSSKiB.map { spread($0.scaled(by: 1 / 1024.0)) } ?? "-",
                    result.maxInFlight.map(String.init) ?? "-", result.requests.map(String.init) ?? "-",
                ])
            }
            lines += table(rows, rightAligned: [false, false, true, true, true, true, true, true])
            for result in results {
                lines.append("  \(result.name): \(result.arguments.joined(separator: " "))\(result.ok ? "" : "  FAILED: \(result.failure ?? "?")")")
            }
        }
        return lines
    }

    /// Where issue 7's and issue 6's targets stand in this run (reported, never asserted).
    static func targets(_ report: BenchmarkReport) -> [String] {
        var lines: [String] = []
        func ratio(_ feed: FeedResult, _ variant: Variant) -> Summary? { feed.variants.first { $0.variant == variant }?.ratioToC }
        func status(_ met: Bool) -> String { met ? "met" : "NOT met" }
        for feed in report.feeds {
            guard let string = feed.variants.first(where: { $0.variant == .stringAPI })?.ratioToXMLParserStream,
                  let syndication = ratio(feed, .syndication), let gzip = ratio(feed, .syndicationGzip) else { continue }
            let speedup = 1 / string.median
            lines.append("  \(feed.name): String API \(fixed(speedup, 2))x the throughput of XMLParser(stream:) (target >= 1.6: "
                + "\(status(speedup >= 1.6))); full extraction \(fixed(syndication.median, 2))x raw libexpat (<= 1.5: "
                + "\(status(syndication.median <= 1.5))); from gzip \(fixed(gzip.median, 2))x (<= 1.8: \(status(gzip.median <= 1.8)))")
        }
        if let slow = report.http.first(where: { $0.rateLimitBytesPerSecond != nil }) {
            for variant in slow.variants where variant.variant == .pipeline || variant.variant == .pipelineGzip {
                guard let chunks = variant.chunksAtFirstArticle, let first = variant.firstArticleMs, let byte = variant.firstByteMs else { continue }
                lines.append("  rate-limited \(variant.variant.rawValue): first article \(fixed(first.median - byte.median, 1)) ms after the first "
                    + "body bytes, in delivery \(chunks) (\(kb(Int(variant.bytesAtFirstArticle ?? 0))) KB) (target: within one chunk: "
                    + "\(status(chunks <= 2)))")
            }
        }
        for result in report.memory where result.feed == Fixture.rss200MB.name && result.variant != .idle && result.variant != .foundationData {
            lines.append("  200 MB peak RSS, \(result.title): \(mib(result.maxRSSKiB)) MiB (target <= 32 MiB: \(status(result.maxRSSKiB <= 32 * 1024)))")
        }
        if let run = report.latency.first(where: { $0.name == "latency-1000" }), let wall = run.wallMs {
            lines.append("  1,000 feeds at 100 ms latency: \(fixed(wall.median / 1000, 2)) s with at most \(run.maxInFlight ?? 0) in flight "
                + "(target <= 3 s with >= 64 in flight: \(status(wall.median <= 3000 && (run.maxInFlight ?? 0) >= 64)))")
        }
        return lines.isEmpty ? [] : ["", "Targets (issue 7 and issue 6; reported, not asserted):"] + lines
    }
}
