import ExpatXML
import Fetch
import Foundation
import XMLFetching
import Synchronization
import Testing

/// Figures for the issue note, not assertions: run with `FEEDINGEST_FETCH_MEASURE=1`, best in release
/// (`swift test -c release --filter FetchTests.MeasurementTests`, inside scripts/offline.sh). Prints a table and
/// one JSON line. Skipped otherwise, so the suite never depends on timing.
@Suite("Measurements", .serialized, .enabled(if: ProcessInfo.processInfo.environment["FEEDINGEST_FETCH_MEASURE"] == "1"))
struct MeasurementTests {
    static func peakRSSMiB() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
    }

    /// The resident set size now, from /proc/self/statm.
    static func currentRSSMiB() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let pages = Double(text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0)
        return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }

    /// The largest growth of the resident set over `baseline` while `body` runs, sampled every millisecond.
    static func rssGrowthMiB(_ body: () -> Void) -> Double {
        let baseline = currentRSSMiB()
        let peak = Mutex(baseline)
        let done = Atomic(false)
        let sampler = Thread {
            while !done.load(ordering: .relaxed) {
                let now = currentRSSMiB()
                peak.withLock { $0 = max($0, now) }
                usleep(1000)
            }
        }
        sampler.start()
        body()
        done.store(true, ordering: .relaxed)
        let now = currentRSSMiB()
        return peak.withLock { max($0, now) } - baseline
    }

    /// The 20.9 MB feed in nginx's tree, made once: written a thousand items at a time and compressed by gzip(1),
    /// so the test process never holds it.
    static let largeFeed: Result<String, ServerError> = {
        guard let nginx = try? Nginx.shared.get() else { return .failure(ServerError(description: "no nginx")) }
        let fileURL = nginx.directory.appendingPathComponent("www/feeds/large.xml")
        do {
            try FeedFixture.writeRSS(items: 13_500, to: fileURL)
            let gzip = Process()
            gzip.executableURL = URL(fileURLWithPath: "/bin/sh")
            gzip.arguments = ["-c", "gzip -6 -c \"$0\" > \"$0.gz\"", fileURL.path]
            try gzip.run()
            gzip.waitUntilExit()
        } catch {
            return .failure(ServerError(description: "\(error)"))
        }
        return .success(fileURL.path)
    }()

    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    @Test func throughputFirstItemAndMemory() throws {
        let nginx = try Nginx.shared.get()
        let items = 13_500
        let file = try Self.largeFeed.get()
        let feedBytes = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        let megabytes = Double(feedBytes) / 1e6
        let rssBefore = Self.peakRSSMiB()
        let rounds = 5

        // 1. Parse the same bytes from the file (64 KiB chunks).
        var fileTimes: [Double] = []
        for _ in 0..<rounds {
            let counter = ItemCounter()
            fileTimes.append(try Self.seconds { try XMLPushParser(handler: counter).parse(contentsOfFile: file) })
            #expect(counter.items == items)
        }

        // 2. Fetch + inflate + parse over loopback from nginx (gzip on the fly), and 3. uncompressed.
        let hashing = Fetcher()
        let notHashing = Fetcher(configuration: testConfiguration { $0.computesBodyHash = false })
        func fetchTimes(_ path: String, hash: Bool = true) -> ([Double], FetchResult?) {
            let fetcher = hash ? hashing : notHashing
            var times: [Double] = []
            var last: FetchResult?
            for _ in 0..<rounds {
                let consumer = CountingConsumer()
                var result: FetchResult?
                times.append(Self.seconds { result = fetcher.fetch(FetchRequest(url: nginx.url(path)), into: consumer) })
                #expect(result?.isOK == true)
                #expect(consumer.items == items)
                last = result
            }
            return (times, last)
        }
        let (gzipTimes, gzipResult) = fetchTimes("/feeds/large.xml")
        let (staticTimes, staticResult) = fetchTimes("/static/feeds/large.xml")
        let (plainTimes, plainResult) = fetchTimes("/plain/feeds/large.xml")
        let (staticNoHashTimes, _) = fetchTimes("/static/feeds/large.xml", hash: false)
        let (plainNoHashTimes, _) = fetchTimes("/plain/feeds/large.xml", hash: false)
        var sha = SHA256()
        let shaBuffer = [UInt8](repeating: 0x61, count: 1 << 20)
        let shaSeconds = Self.seconds { for _ in 0..<20 { sha.update(shaBuffer) } }
        _ = sha.finalize()
        var growthGzip = 0.0, growthPlain = 0.0
        growthGzip = Self.rssGrowthMiB { _ = fetchTimes("/static/feeds/large.xml") }
        growthPlain = Self.rssGrowthMiB { _ = fetchTimes("/plain/feeds/large.xml") }

        // 4. Time to the first item on the rate-limited location (256 KiB/s, gzip), and to the end.
        let slowTransfer = hashing.start(FetchRequest(url: nginx.url("/slow/feeds/medium.xml")))
        let slowConsumer = CountingConsumer()
        let slowStart = ContinuousClock.now
        var firstItem: Duration?
        slowConsumer.counter.onItem = { count in if count == 1 { firstItem = ContinuousClock.now - slowStart } }
        let slowResult = slowTransfer.deliver(to: slowConsumer)
        let slowTotal = ContinuousClock.now - slowStart
        let rssAfter = Self.peakRSSMiB()

        let best = { (times: [Double]) in times.min() ?? 0 }
        let ms = { (d: Duration?) in d.map { Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15 } ?? -1 }
        let gzipMB = Double(gzipResult?.bodyBytes ?? 0) / 1e6
        print("""

        Fetch measurements (\(String(format: "%.1f", megabytes)) MB RSS feed, \(items) items, best of \(rounds), loopback)
        | path                                   | seconds | MB/s (XML) | × file parse |
        |----------------------------------------|---------|------------|--------------|
        | parse from file (64 KiB chunks)        | \(String(format: "%7.3f", best(fileTimes))) | \(String(format: "%10.1f", megabytes / best(fileTimes))) | 1.00 |
        | fetch + gunzip + parse (nginx gzip)    | \(String(format: "%7.3f", best(gzipTimes))) | \(String(format: "%10.1f", megabytes / best(gzipTimes))) | \(String(format: "%.2f", best(gzipTimes) / best(fileTimes))) |
        | fetch + gunzip + parse (.gz, static)   | \(String(format: "%7.3f", best(staticTimes))) | \(String(format: "%10.1f", megabytes / best(staticTimes))) | \(String(format: "%.2f", best(staticTimes) / best(fileTimes))) |
        | fetch + parse (nginx, no gzip)         | \(String(format: "%7.3f", best(plainTimes))) | \(String(format: "%10.1f", megabytes / best(plainTimes))) | \(String(format: "%.2f", best(plainTimes) / best(fileTimes))) |
        | … .gz static, no SHA-256               | \(String(format: "%7.3f", best(staticNoHashTimes))) | \(String(format: "%10.1f", megabytes / best(staticNoHashTimes))) | \(String(format: "%.2f", best(staticNoHashTimes) / best(fileTimes))) |
        | … no gzip, no SHA-256                  | \(String(format: "%7.3f", best(plainNoHashTimes))) | \(String(format: "%10.1f", megabytes / best(plainNoHashTimes))) | \(String(format: "%.2f", best(plainNoHashTimes) / best(fileTimes))) |
        SHA-256 alone: \(String(format: "%.0f", 20 * 1.048576 / shaSeconds)) MB/s
        gzip on the wire: \(String(format: "%.2f", gzipMB)) MB; peak buffered per transfer: \(gzipResult?.peakBufferedBytes ?? 0) B gzip, \(plainResult?.peakBufferedBytes ?? 0) B plain; pauses: \(gzipResult?.pauses ?? 0) / \(plainResult?.pauses ?? 0)
        rate-limited /slow/ (256 KiB/s, \(slowResult.bodyBytes) B gzip): first item after \(String(format: "%.1f", ms(firstItem))) ms, whole feed after \(String(format: "%.0f", ms(slowTotal))) ms
        RSS growth while fetching the feed 5 times: \(String(format: "%.1f", growthGzip)) MiB (.gz static), \(String(format: "%.1f", growthPlain)) MiB (plain); process peak RSS \(String(format: "%.1f", rssBefore)) MiB before, \(String(format: "%.1f", rssAfter)) MiB after (the growth is the fetches' own)
        static .gz: \(staticResult?.contentEncoding ?? "none"), \(staticResult?.bodyBytes ?? 0) B on the wire
        """)
        print("FETCH_MEASURE_JSON {\"feed_bytes\":\(feedBytes),\"items\":\(items),\"file_s\":\(best(fileTimes)),\"fetch_gzip_s\":\(best(gzipTimes)),\"fetch_plain_s\":\(best(plainTimes)),\"fetch_static_gz_s\":\(best(staticTimes)),\"rss_growth_gz_mib\":\(growthGzip),\"rss_growth_plain_mib\":\(growthPlain),\"gzip_wire_bytes\":\(gzipResult?.bodyBytes ?? 0),\"slow_first_item_ms\":\(ms(firstItem)),\"slow_total_ms\":\(ms(slowTotal)),\"rss_before_mib\":\(rssBefore),\"rss_after_mib\":\(rssAfter)}")
        #expect(slowResult.isOK)
    }

    /// Peak memory measured in a fresh process (this test binary, run again with only ``MemoryProbe``), so nothing
    /// the measuring process did before counts: (startup peak, peak after fetching) in MiB.
    static func probeMemory(_ target: String) throws -> (Double, Double) {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["--testing-library", "swift-testing", "--filter", "MemoryProbe"]
        var environment = ProcessInfo.processInfo.environment
        environment["FEEDINGEST_FETCH_MEMORY_PROBE"] = target
        child.environment = environment
        let output = Pipe()
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        try child.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("MEMORY_PROBE ") }) else { return (-1, -1) }
        let numbers = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        return numbers.count == 2 ? (numbers[0], numbers[1]) : (-1, -1)
    }

    @Test func peakMemoryInAFreshProcess() throws {
        let nginx = try Nginx.shared.get()
        let fromFile = try Self.probeMemory(try Self.largeFeed.get())
        let overHTTP = try Self.probeMemory(nginx.url("/feeds/large.xml").absoluteString)
        print("""
        Peak RSS of a fresh process (MiB): parse the 20.9 MB file: \(fromFile.0) at start → \(fromFile.1); \
        fetch + gunzip + parse it from nginx: \(overHTTP.0) at start → \(overHTTP.1)
        FETCH_MEMORY_JSON {"file_start_mib":\(fromFile.0),"file_peak_mib":\(fromFile.1),"fetch_start_mib":\(overHTTP.0),"fetch_peak_mib":\(overHTTP.1)}
        """)
    }
}

/// The child side of ``MeasurementTests/probeMemory(_:)``: parses a path or fetches a URL, then prints the peak RSS.
@Suite("MemoryProbe", .enabled(if: ProcessInfo.processInfo.environment["FEEDINGEST_FETCH_MEMORY_PROBE"] != nil))
struct MemoryProbe {
    @Test func probe() throws {
        let target = ProcessInfo.processInfo.environment["FEEDINGEST_FETCH_MEMORY_PROBE"]!
        let start = MeasurementTests.peakRSSMiB()
        let counter = ItemCounter()
        if target.hasPrefix("http") {
            let result = Fetcher().fetch(FetchRequest(url: URL(string: target)!), into: XMLParsingConsumer(handler: counter))
            #expect(result.isOK)
        } else {
            try XMLPushParser(handler: counter).parse(contentsOfFile: target)
        }
        #expect(counter.items == 13_500)
        if counter.items == 13_500 { print("MEMORY_PROBE \(start) \(MeasurementTests.peakRSSMiB())") }
    }
}
