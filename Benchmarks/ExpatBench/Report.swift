import Foundation

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
            lines.append("\(feed.format == .rss ? "RSS 2.0" : "Atom 1.0") \(feed.name): \(mb(feed.bytes)) MB, "
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
                + "isCollectingText; the String API asks for attributes only on Atom <link> (shouldProcessAttributes). "
                + "First item: from before the parser is created to the first item's start tag (C no-op: a separate parse that stops there).")
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
                + "file); ru_maxrss from wait4(2), the child's own VmHWM in parentheses")
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

    private static func table(_ rows: [[String]], rightAligned: [Bool]) -> [String] {
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

    private static func uniqued<T: Hashable>(_ values: [T]) -> [T] {
        var seen = Set<T>()
        return values.filter { seen.insert($0).inserted }
    }

    static func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
    static func mb(_ bytes: Int) -> String { fixed(Double(bytes) / 1e6, 2) }
    static func mib(_ kib: Int) -> String { fixed(Double(kib) / 1024, 1) }
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
