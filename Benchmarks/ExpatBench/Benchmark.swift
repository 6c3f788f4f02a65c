import Foundation
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

enum BenchmarkMain {
    static func run(arguments: [String], isDebugBuild: Bool) -> Int32 {
        let command: Command
        do { command = try Command.parse(arguments) } catch {
            log("feedingest-bench: \(error)\n\n\(Command.usage)")
            return 64
        }
        let chunkSize = BenchmarkOptions().chunkSize
        switch command {
        case .help:
            print(Command.usage)
            return 0
        case .probeFile(let variant, let path):
            return Probe.runFile(variant: variant, path: path, chunkSize: chunkSize)
        case .probeGenerated(let variant, let format, let items):
            return Probe.runGenerated(variant: variant, format: format, items: items, chunkSize: chunkSize)
        case .measure(let arguments):
            return Probe.measure(arguments)
        case .measureCommand(let arguments):
            return Probe.measureCommand(arguments)
        case .probeHTTP(let variant, let url):
            return Probe.runHTTP(variant: variant, url: url)
        case .probeJSON(let variant, let path):
            return JSONBench.probe(variant: variant, path: path)
        case .benchmark(let options):
            if isDebugBuild {
                let banner = String(repeating: "!", count: 78)
                guard options.allowDebug else {
                    log("""
                        \(banner)
                        !! feedingest-bench was built in DEBUG: its timings would be meaningless.
                        !! Run it as:  swift run -c release feedingest-bench
                        !! (or pass --allow-debug to run anyway, e.g. to smoke-test the harness)
                        \(banner)
                        """)
                    return 2
                }
                log("""
                    \(banner)
                    !! WARNING: DEBUG BUILD (--allow-debug). Every figure below is meaningless for performance.
                    \(banner)
                    """)
            }
            do {
                return try Benchmark(options: options, isDebugBuild: isDebugBuild).run()
            } catch {
                log("feedingest-bench: \(error)")
                return 1
            }
        }
    }
}

/// The timed comparison and the peak-RSS probes.
struct Benchmark {
    let options: BenchmarkOptions
    let isDebugBuild: Bool

    func run() throws -> Int32 {
        let started = monotonicNanos()
        let loadAtStart = Self.loadAverage()
        let directory = options.fixturesDirectory
        let sections = options.sections
        func fixture(_ spec: (name: String, format: FeedFormat, items: Int)) throws -> Fixture {
            try Fixture.ensure(name: spec.name, format: spec.format, items: spec.items, directory: directory)
        }
        var problems: [String: String] = [:]
        @discardableResult func section<T>(_ section: Section, _ body: () throws -> T) -> T? {
            guard sections.contains(section) else { return nil }
            do { return try body() } catch {
                log("feedingest-bench: section \(section.rawValue) skipped: \(error)")
                problems[section.rawValue] = String(describing: error)
                return nil
            }
        }

        var feeds: [FeedResult] = []
        section(.parse) {
            for spec in [Fixture.rss20MB, Fixture.atom20MB] {
                let loaded = try fixture(spec)
                let title = "\(spec.format == .rss ? "RSS 2.0" : "Atom 1.0") \(spec.name)"
                feeds.append(try timeFeeds([loaded], name: spec.name, description: title))
            }
        }
        section(.seed) {
            let seed = try SeedSet.ensure(directory: directory)
            feeds.append(try timeFeeds(seed, name: "seed-set", description: "Seed set: \(seed.count) feeds shaped like "
                + "iPhoneExpat's list (\(Report.kb(seed.map(\.manifest.bytes).min() ?? 0))-\(Report.kb(seed.map(\.manifest.bytes).max() ?? 0)) KB each); "
                + "times are totals over the set, first item the mean over its feeds"))
        }
        var memory: [MemoryResult] = []
        section(.memory) {
            var memoryFixtures = [try fixture(Fixture.rss20MB)]
            if !options.quick { memoryFixtures.append(try fixture(Fixture.rss200MB)) }
            for fixture in memoryFixtures {
                try Gzip.ensure(fixture.path)
                memory += probeFeed(fixture)
            }
        }

        var http: [HTTPRunResult] = []
        var endToEnd: [CommandResult] = []
        if sections.contains(.http) || sections.contains(.e2e) {
            section(sections.contains(.http) ? .http : .e2e) {
                let fast = try fixture(Fixture.rss20MB)
                let slow = try fixture(Fixture.rss2MB)
                let seed = try SeedSet.ensure(directory: directory)
                for file in [fast, slow] { try Gzip.ensure(file.path) }
                let server = try HTTPVariant.startNginx(serving: [fast.path, slow.path] + seed.map(\.path))
                defer { server.stop() }
                if sections.contains(.http) {
                    http = runHTTP(server: server, fast: fast, slow: slow)
                }
                section(.e2e) {
                    let executable = try Self.feedingestExecutable().get()
                    let rounds = options.quick ? 1 : max(5, min(options.rounds, 7))
                    endToEnd.append(try runCommand(
                        name: "e2e-seed-set", description: "seed set, \(seed.count) feeds over HTTP (nginx, gzip)", executable: executable,
                        feedURLs: seed.map { server.url(HTTPVariant.pipelineGzip.path(of: $0, slow: false)) }, bytes: seed.reduce(0) { $0 + $1.manifest.bytes },
                        rounds: rounds, timeout: 120))
                    endToEnd.append(try runCommand(
                        name: "e2e-rss-20MB", description: "\(fast.name) over HTTP (nginx, gzip)", executable: executable,
                        feedURLs: [server.url(HTTPVariant.pipelineGzip.path(of: fast, slow: false))], bytes: fast.manifest.bytes, rounds: rounds, timeout: 300))
                }
            }
        }

        var latency: [CommandResult] = []
        section(.latency) {
            let executable = try Self.feedingestExecutable().get()
            let server = try FeedServer(feeds: 1000, ports: 20, delay: 0.1)
            defer { server.stop() }
            let stats: () -> (maxInFlight: Int, requests: Int)? = {
                (try? server.stats(reset: true)).map { ($0.max_in_flight, $0.requests) }
            }
            let description = "\(Report.grouped(server.feedURLs.count)) feeds on 20 ports of 127.0.0.1, every response 100 ms late"
            latency.append(try runCommand(name: "latency-1000", description: description + ", default --jobs", executable: executable,
                                          feedURLs: server.feedURLs, bytes: nil, rounds: options.quick ? 1 : 5, timeout: 120,
                                          between: { _ = stats() }, after: stats))
            if !options.quick {
                latency.append(try runCommand(name: "latency-1000-jobs-1", description: description + ", --jobs 1", executable: executable,
                                              feedURLs: server.feedURLs, bytes: nil, extraArguments: ["--jobs", "1"], rounds: 5,
                                              timeout: 240, between: { _ = stats() }, after: stats))
            }
        }

        var hashes: [HashResult] = []
        section(.hash) { hashes = HashBench.run(rounds: options.rounds) }

        var json: JSONBench.Result?
        section(.json) { json = try JSONBench.run(options: options) }
        var scale: [ScaleResult] = []
        section(.scale) {
            let executable = try Self.feedingestExecutable().get()
            scale = try ScaleBench.run(executable: executable, rounds: options.quick ? 1 : 3)
        }

        var process: ProcessBench.Result?
        section(.process) {
            let fast = try fixture(Fixture.rss20MB)
            let gzip = try Gzip.ensure(fast.path)
            let server = try HTTPVariant.startNginx(serving: [fast.path])
            defer { server.stop() }
            process = try ProcessBench.run(fixture: fast, gzipPath: gzip, server: server, options: options)
        }
        var instructions: [ProcessBench.Count] = []
        section(.instructions) {
            let fast = try fixture(Fixture.rss20MB)
            instructions = try ProcessBench.instructions(fixture: fast, gzipPath: try Gzip.ensure(fast.path))
        }

        let report = BenchmarkReport(
            tool: "feedingest-bench", generatorVersion: FeedGenerator.version, build: isDebugBuild ? "debug" : "release",
            cores: ProcessInfo.processInfo.activeProcessorCount, cpu: Self.cpuModel(), chunkBytes: options.chunkSize,
            rounds: options.rounds, warmupRounds: options.warmupRounds, quick: options.quick,
            sections: Section.allCases.filter(sections.contains).map(\.rawValue), skipped: problems,
            feeds: feeds, memory: memory, http: http, endToEnd: endToEnd, latency: latency, hashes: hashes, json: json, scale: scale,
            process: process, instructions: instructions, totalSeconds: Double(monotonicNanos() - started) / 1e9, loadAverage: [loadAtStart, Self.loadAverage()])
        Report.printTables(report)
        Report.printJSON(report)
        let foundation: Set<HTTPVariant> = [.foundationContentsOf, .urlSessionData]
        let allVerified = feeds.allSatisfy { $0.variants.allSatisfy { $0.ok || $0.variant == .foundationData } }
            && memory.allSatisfy { $0.ok || $0.variant == .foundationData }
            && http.allSatisfy { $0.variants.allSatisfy { $0.ok || foundation.contains($0.variant) } }
            && endToEnd.allSatisfy(\.ok) && latency.allSatisfy(\.ok) && hashes.allSatisfy(\.ok) && (json?.ok ?? true) && scale.allSatisfy(\.ok)
            && (process.map { ($0.rows + $0.storeRows).allSatisfy(\.ok) } ?? true) && instructions.allSatisfy { $0.failure == nil }
            && problems.isEmpty
        return allVerified ? 0 : 1
    }

    /// The CPU model from /proc/cpuinfo.
    static func cpuModel() -> String? {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for line in info.split(separator: "\n") where line.hasPrefix("model name") {
            return line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    static func loadAverage() -> Double {
        var loads = [0.0, 0.0, 0.0]
        return getloadavg(&loads, 3) > 0 ? loads[0] : .nan
    }

    /// Paired, alternating rounds over feeds held in memory: every round runs every variant once, in order, over every
    /// feed of `fixtures`; a variant's time in a round is its total over them.
    func timeFeeds(_ fixtures: [Fixture], name: String, description: String) throws -> FeedResult {
        struct Loaded {
            var fixture: Fixture
            var data: Data
            var gzip: Data
        }
        let loaded = try fixtures.map { fixture -> Loaded in
            let data = try Data(contentsOf: URL(fileURLWithPath: fixture.path))
            guard data.count == fixture.manifest.bytes else { throw FixtureError(message: "\(fixture.path) changed size") }
            return Loaded(fixture: fixture, data: data, gzip: try Data(contentsOf: URL(fileURLWithPath: try Gzip.ensure(fixture.path))))
        }
        var outcomes: [Variant: [RunOutcome]] = [:]
        var cFirstItem: [Double] = []
        let total = options.warmupRounds + options.rounds
        for round in 0..<total {
            let counted = round >= options.warmupRounds
            log("\(name): \(counted ? "round \(round - options.warmupRounds + 1)/\(options.rounds)" : "warm-up")…")
            for variant in Variant.timed {
                var sum = RunOutcome(ok: true, seconds: 0, cpuSeconds: 0)
                var firstItems: [Double] = []
                for feed in loaded {
                    let outcome = Runner.run(variant, input: .memory(variant.readsGzip ? feed.gzip : feed.data),
                                             format: feed.fixture.manifest.format, chunkSize: options.chunkSize,
                                             manifest: feed.fixture.manifest)
                    sum.add(outcome, single: loaded.count == 1, feed: feed.fixture.name)
                    if let first = outcome.firstItemSeconds { firstItems.append(first) }
                }
                if !firstItems.isEmpty { sum.firstItemSeconds = firstItems.reduce(0, +) / Double(firstItems.count) }
                if counted { outcomes[variant, default: []].append(sum) }
            }
            if counted {
                let firsts = loaded.compactMap { Runner.cFirstItemSeconds($0.data, format: $0.fixture.manifest.format, chunkSize: options.chunkSize) }
                if !firsts.isEmpty { cFirstItem.append(firsts.reduce(0, +) / Double(firsts.count)) }
            }
        }
        let bytes = loaded.reduce(0) { $0 + $1.fixture.manifest.bytes }
        let cSeconds = outcomes[.cNoop]!.map(\.seconds)
        let cCPU = outcomes[.cNoop]!.map { $0.cpuSeconds ?? .nan }
        let streamSeconds = outcomes[.foundationStream]!.map(\.seconds)
        let variants = Variant.timed.map { variant -> VariantResult in
            let runs = outcomes[variant]!
            let seconds = runs.map(\.seconds)
            let cpu = runs.map { $0.cpuSeconds ?? .nan }
            let failure = runs.first { !$0.ok }?.failure
            let median = Summary(seconds)!.median
            let firstItem = variant == .cNoop ? cFirstItem : runs.compactMap(\.firstItemSeconds)
            return VariantResult(
                variant: variant, title: variant.title, ok: failure == nil, failure: failure,
                items: runs.last?.items, elements: runs.last?.elements,
                wallMs: Summary(seconds)!.scaled(by: 1000),
                cpuMs: Summary(cpu)!.scaled(by: 1000),
                megabytesPerSecond: Double(bytes) / median / 1e6,
                ratioToC: Summary(zip(seconds, cSeconds).map { $0 / $1 }),
                ratioToXMLParserStream: Summary(zip(seconds, streamSeconds).map { $0 / $1 }),
                cpuRatioToC: Summary(zip(cpu, cCPU).map { $0 / $1 }),
                firstItemMs: Summary(firstItem)?.scaled(by: 1000))
        }
        return FeedResult(name: name, description: description, format: loaded.count == 1 ? loaded[0].fixture.manifest.format : nil,
                          feeds: loaded.count, bytes: bytes,
                          items: loaded.reduce(0) { $0 + $1.fixture.manifest.items },
                          elements: loaded.reduce(0) { $0 + $1.fixture.manifest.elements }, variants: variants)
    }

    /// One child per variant, streaming the file from disk; the parent takes ru_maxrss from wait4.
    private func probeFeed(_ fixture: Fixture) -> [MemoryResult] {
        ([.idle] + Variant.timed).map { variant in
            log("\(fixture.name): peak-RSS probe \(variant.rawValue)…")
            let path = variant.readsGzip ? (try? Gzip.ensure(fixture.path)) ?? fixture.path + ".gz" : fixture.path
            let result = Probe.spawnMeasured(["--probe", variant.rawValue, path])
            var outcome = result.report?.outcome
            if var checked = outcome, variant != .idle {
                Runner.verify(&checked, against: fixture.manifest)
                outcome = checked
            }
            let failure = result.failure ?? outcome?.failure
            return MemoryResult(
                feed: fixture.name, bytes: fixture.manifest.bytes, variant: variant, title: variant.title,
                ok: failure == nil && (outcome?.ok ?? false), failure: failure,
                maxRSSKiB: result.maxRSSKiB, vmHWMKiB: result.report?.vmHWMKiB,
                parseSeconds: variant == .idle ? nil : outcome?.seconds, items: outcome?.items)
        }
    }
}

// MARK: Results

struct VariantResult: Codable {
    var variant: Variant
    var title: String
    var ok: Bool
    var failure: String?
    var items: Int?
    var elements: Int?
    /// Wall time of one parse, in milliseconds (for a failed parse: until it gave up).
    var wallMs: Summary
    /// The parsing thread's CPU time over the same span, in milliseconds.
    var cpuMs: Summary
    /// Feed bytes over the median wall time, in 10^6 bytes a second.
    var megabytesPerSecond: Double
    /// This variant's time over the C no-op's in the same round, across rounds.
    var ratioToC: Summary?
    /// This variant's time over Foundation XMLParser(stream:)'s in the same round, across rounds.
    var ratioToXMLParserStream: Summary?
    /// Like `ratioToC`, on CPU time.
    var cpuRatioToC: Summary?
    /// From before the parser is created to the first item's (or entry's) start tag, in milliseconds (Syndication: to
    /// the first complete article); over a set of feeds, the mean over its feeds.
    var firstItemMs: Summary?
}

extension RunOutcome {
    /// Adds another feed's run to a total over a set of feeds.
    mutating func add(_ other: RunOutcome, single: Bool, feed: String) {
        seconds += other.seconds
        cpuSeconds = (cpuSeconds ?? 0) + (other.cpuSeconds ?? .nan)
        items = (items ?? 0) + (other.items ?? 0)
        if let elements = other.elements { self.elements = (self.elements ?? 0) + elements }
        if ok && !other.ok {
            ok = false
            failure = single ? other.failure : "\(feed): \(other.failure ?? "?")"
        }
        if single {
            tally = other.tally
            parsedDates = other.parsedDates
        }
    }
}

struct FeedResult: Codable {
    var name: String
    /// What the feeds are, for the table's heading.
    var description: String
    /// `nil` for a set of feeds of both formats.
    var format: FeedFormat?
    /// How many feeds the times are totals over.
    var feeds: Int
    var bytes: Int
    var items: Int
    var elements: Int
    var variants: [VariantResult]
}

struct MemoryResult: Codable {
    var feed: String
    var bytes: Int
    var variant: Variant
    var title: String
    var ok: Bool
    var failure: String?
    /// ru_maxrss of the child from wait4(2), KiB.
    var maxRSSKiB: Int
    /// The child's own VmHWM, KiB (cross-check).
    var vmHWMKiB: Int?
    /// The child's parse time, streaming from disk (page cache), one run.
    var parseSeconds: Double?
    var items: Int?
}

struct BenchmarkReport: Codable {
    var tool: String
    var generatorVersion: Int
    var build: String
    var cores: Int
    var cpu: String?
    var chunkBytes: Int
    var rounds: Int
    var warmupRounds: Int
    var quick: Bool
    /// The sections asked for, and those that could not run (name → why).
    var sections: [String]
    var skipped: [String: String]
    var feeds: [FeedResult]
    var memory: [MemoryResult]
    var http: [HTTPRunResult]
    var endToEnd: [CommandResult]
    var latency: [CommandResult]
    var hashes: [HashResult]
    /// The `json` section (JSON Feed), when it ran.
    var json: JSONBench.Result?
    var scale: [ScaleResult]
    /// The `process` section (whole programs), when it ran.
    var process: ProcessBench.Result?
    /// The `instructions` section (callgrind), when it ran.
    var instructions: [ProcessBench.Count]
    var totalSeconds: Double
    /// The 1-minute load average at the start and at the end: other work on the machine disturbs wall times.
    var loadAverage: [Double]
}
