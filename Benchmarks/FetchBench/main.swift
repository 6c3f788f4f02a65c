// feedingest-fetch-bench: Fetch over loopback against parsing the same file (it was FetchTests.MeasurementTests,
// an environment-gated "test"; run it in release):
//
//     swift run -c release feedingest-fetch-bench [--rounds 5]
//
// A 20.9 MB RSS feed of 13,500 items (TestSupport's FeedFixture.writeRSS) is parsed from the file and fetched from a
// loopback nginx (gzip on the fly, precompressed .gz, uncompressed; with and without the body's SHA-256), best of
// --rounds each; then the first item over the rate-limited location, the RSS growth while fetching, and the peak RSS
// of a fresh process (this binary re-executed with --probe TARGET) that parses the file or fetches it. Prints a table,
// then FETCH_MEASURE_JSON and FETCH_MEMORY_JSON lines. Everything stays on 127.0.0.1.

import ExpatXML
import Fetch
import Foundation
import Support
import XMLFetching
import Synchronization
import TestSupport

/// Counts items (RSS `item`) as their end tags are parsed.
final class ItemTally: XMLEventHandler {
    private(set) var items = 0
    var onItem: ((Int) -> Void)?

    func endElement(_ name: XMLName) {
        guard name.localName.equals("item") else { return }
        items += 1
        onItem?(items)
    }
}

/// The 20.9 MB feed's item count.
enum FeedSize {
    static let items = 13_500
}

func peakRSSMiB() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

/// The resident set size now, from /proc/self/statm.
func currentRSSMiB() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let pages = Double(text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0)
    return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

/// The largest growth of the resident set over `baseline` while `body` runs, sampled every millisecond.
func rssGrowthMiB(_ body: () -> Void) -> Double {
    let baseline = currentRSSMiB()
    let peak = Lock(baseline)
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

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("feedingest-fetch-bench: \(message)\n".utf8))
    exit(1)
}

/// `--probe TARGET`, the child: parses a path or fetches a URL, then prints its peak RSS before and after.
func probe(_ target: String) -> Never {
    let start = peakRSSMiB()
    let counter = ItemTally()
    if target.hasPrefix("http") {
        let fetcher = Fetcher()
        let result = fetcher.fetch(FetchRequest(url: URL(string: target)!), into: XMLParsingConsumer(handler: counter))
        fetcher.shutdown()
        guard result.isOK else { fail("fetching \(target) failed: \(result.error.map { "\($0)" } ?? "?")") }
    } else {
        do { try XMLPushParser(handler: counter).parse(contentsOfFile: target) } catch { fail("parsing \(target) failed: \(error)") }
    }
    guard counter.items == FeedSize.items else { fail("\(target): \(counter.items) items, expected \(FeedSize.items)") }
    print("MEMORY_PROBE \(start) \(peakRSSMiB())")
    exit(0)
}

/// Peak memory in a fresh process (this binary, run again with --probe): (startup peak, peak after) in MiB.
func probeMemory(_ target: String) throws -> (Double, Double) {
    let self_ = Paths.builtExecutable("feedingest-fetch-bench")?.path ?? CommandLine.arguments[0]
    let child = try Spawn.run(self_, ["--probe", target])
    guard let line = child.output.split(separator: "\n").first(where: { $0.hasPrefix("MEMORY_PROBE ") }) else { return (-1, -1) }
    let numbers = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    return numbers.count == 2 ? (numbers[0], numbers[1]) : (-1, -1)
}

let arguments = CommandLine.arguments
if arguments.count == 3, arguments[1] == "--probe" { probe(arguments[2]) }
if arguments.contains("--help") || arguments.contains("-h") {
    print("usage: feedingest-fetch-bench [--rounds N]   (run it in release: swift run -c release feedingest-fetch-bench)")
    exit(0)
}
let options = CommandOptions(arguments.dropFirst())
let rounds = max(options.int("rounds", 5), 1)
#if DEBUG
FileHandle.standardError.write(Data("feedingest-fetch-bench: a debug build; its figures mean nothing (swift run -c release feedingest-fetch-bench)\n".utf8))
#endif

/// Everything but the probe child, with `rounds` rounds per path.
func measure(rounds: Int) throws {
    // The Fetch tests' nginx layout: generated feeds at /feeds/ (gzip on the fly), rate-limited at /slow/ (256 KiB/s),
    // uncompressed at /plain/, precompressed .gz at /static/.
    var configuration = NginxServer.Configuration()
    configuration.files["feeds/medium.xml"] = FeedFixture.rss(items: 1500)
    configuration.locations = [
        .init("/slow/", limitRate: 256 << 10),
        .init("/plain/", gzip: false),
        .init("/static/", gzip: false, gzipStatic: true),
    ]
    let nginx: NginxServer
    do { nginx = try NginxServer(configuration) } catch { fail("nginx did not start: \(error)") }

    // The 20.9 MB feed, written a thousand items at a time and gzipped beside it, so this process never holds it.
    let file = nginx.documentRoot.appendingPathComponent("feeds/large.xml")
    do {
        try FeedFixture.writeRSS(items: FeedSize.items, to: file)
        try Compress.gzipFile(file.path, to: file.path + ".gz")
    } catch {
        fail("cannot write the feed: \(error)")
    }
    let feedBytes = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
    let megabytes = Double(feedBytes) / 1e6
    let rssBefore = peakRSSMiB()

    // 1. Parse the same bytes from the file (64 KiB chunks).
    var fileTimes: [Double] = []
    for _ in 0..<rounds {
        let counter = ItemTally()
        fileTimes.append(try seconds { try XMLPushParser(handler: counter).parse(contentsOfFile: file.path) })
        if counter.items != FeedSize.items { fail("parsed \(counter.items) items from the file, expected \(FeedSize.items)") }
    }

    // 2. Fetch + inflate + parse over loopback from nginx (gzip on the fly, precompressed), and 3. uncompressed.
    let hashing = Fetcher()
    var noHash = FetchConfiguration()
    noHash.computesBodyHash = false
    let notHashing = Fetcher(configuration: noHash)
    func fetchTimes(_ path: String, hash: Bool = true) -> ([Double], FetchResult?) {
        let fetcher = hash ? hashing : notHashing
        var times: [Double] = []
        var last: FetchResult?
        for _ in 0..<rounds {
            let counter = ItemTally()
            var result: FetchResult?
            times.append(seconds { result = fetcher.fetch(FetchRequest(url: nginx.url(path)), into: XMLParsingConsumer(handler: counter)) })
            if result?.isOK != true || counter.items != FeedSize.items { fail("\(path): \(counter.items) items, \(result.map { "\($0.outcome)" } ?? "no result")") }
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
    let shaSeconds = seconds { for _ in 0..<20 { sha.update(shaBuffer) } }
    _ = sha.finalize()
    let growthGzip = rssGrowthMiB { _ = fetchTimes("/static/feeds/large.xml") }
    let growthPlain = rssGrowthMiB { _ = fetchTimes("/plain/feeds/large.xml") }

    // 4. Time to the first item on the rate-limited location (256 KiB/s, gzip), and to the end.
    let slowTransfer = hashing.start(FetchRequest(url: nginx.url("/slow/feeds/medium.xml")))
    let slowCounter = ItemTally()
    let slowStart = ContinuousClock.now
    var firstItem: Duration?
    slowCounter.onItem = { count in if count == 1 { firstItem = ContinuousClock.now - slowStart } }
    let slowResult = slowTransfer.deliver(to: XMLParsingConsumer(handler: slowCounter))
    let slowTotal = ContinuousClock.now - slowStart
    let rssAfter = peakRSSMiB()
    if !slowResult.isOK { fail("the rate-limited fetch failed: \(slowResult.outcome)") }

    let best = { (times: [Double]) in times.min() ?? 0 }
    let ms = { (d: Duration?) in d.map { Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15 } ?? -1 }
    let gzipMB = Double(gzipResult?.bodyBytes ?? 0) / 1e6
    func row(_ name: String, _ times: [Double]) -> String {
        "| \(name.padding(toLength: 38, withPad: " ", startingAt: 0)) | \(String(format: "%7.3f", best(times))) | "
            + "\(String(format: "%10.1f", megabytes / best(times))) | \(String(format: "%.2f", best(times) / best(fileTimes))) |"
    }
    print("""

    Fetch measurements (\(String(format: "%.1f", megabytes)) MB RSS feed, \(FeedSize.items) items, best of \(rounds), loopback)
    | path                                   | seconds | MB/s (XML) | × file parse |
    |----------------------------------------|---------|------------|--------------|
    \(row("parse from file (64 KiB chunks)", fileTimes))
    \(row("fetch + gunzip + parse (nginx gzip)", gzipTimes))
    \(row("fetch + gunzip + parse (.gz, static)", staticTimes))
    \(row("fetch + parse (nginx, no gzip)", plainTimes))
    \(row("… .gz static, no SHA-256", staticNoHashTimes))
    \(row("… no gzip, no SHA-256", plainNoHashTimes))
    SHA-256 alone: \(String(format: "%.0f", 20 * 1.048576 / shaSeconds)) MB/s
    gzip on the wire: \(String(format: "%.2f", gzipMB)) MB; peak buffered per transfer: \(gzipResult?.peakBufferedBytes ?? 0) B gzip, \(plainResult?.peakBufferedBytes ?? 0) B plain; pauses: \(gzipResult?.pauses ?? 0) / \(plainResult?.pauses ?? 0)
    rate-limited /slow/ (256 KiB/s, \(slowResult.bodyBytes) B gzip): first item after \(String(format: "%.1f", ms(firstItem))) ms, whole feed after \(String(format: "%.0f", ms(slowTotal))) ms
    RSS growth while fetching the feed \(rounds) times: \(String(format: "%.1f", growthGzip)) MiB (.gz static), \(String(format: "%.1f", growthPlain)) MiB (plain); process peak RSS \(String(format: "%.1f", rssBefore)) MiB before, \(String(format: "%.1f", rssAfter)) MiB after (the growth is the fetches' own)
    static .gz: \(staticResult?.contentEncoding ?? "none"), \(staticResult?.bodyBytes ?? 0) B on the wire
    """)
    print("FETCH_MEASURE_JSON {\"feed_bytes\":\(feedBytes),\"items\":\(FeedSize.items),\"file_s\":\(best(fileTimes)),\"fetch_gzip_s\":\(best(gzipTimes)),\"fetch_plain_s\":\(best(plainTimes)),\"fetch_static_gz_s\":\(best(staticTimes)),\"rss_growth_gz_mib\":\(growthGzip),\"rss_growth_plain_mib\":\(growthPlain),\"gzip_wire_bytes\":\(gzipResult?.bodyBytes ?? 0),\"slow_first_item_ms\":\(ms(firstItem)),\"slow_total_ms\":\(ms(slowTotal)),\"rss_before_mib\":\(rssBefore),\"rss_after_mib\":\(rssAfter)}")
    hashing.shutdown()
    notHashing.shutdown()

    // 5. Peak RSS of a fresh process that parses the file, and one that fetches it from nginx (gzip on the fly).
    do {
        let fromFile = try probeMemory(file.path)
        let overHTTP = try probeMemory(nginx.url("/feeds/large.xml").absoluteString)
        print("""
        Peak RSS of a fresh process (MiB): parse the \(String(format: "%.1f", megabytes)) MB file: \(fromFile.0) at start → \(fromFile.1); \
        fetch + gunzip + parse it from nginx: \(overHTTP.0) at start → \(overHTTP.1)
        FETCH_MEMORY_JSON {"file_start_mib":\(fromFile.0),"file_peak_mib":\(fromFile.1),"fetch_start_mib":\(overHTTP.0),"fetch_peak_mib":\(overHTTP.1)}
        """)
    } catch {
        fail("the memory probe did not run: \(error)")
    }
    nginx.stop()
}

do { try measure(rounds: rounds) } catch { fail("\(error)") }
