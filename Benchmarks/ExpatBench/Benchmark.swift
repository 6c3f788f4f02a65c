import Foundation
#if canImport(Glibc)
import Glibc
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
        let timedFixtures = [
            try Fixture.ensure(name: Fixture.rss20MB.name, format: Fixture.rss20MB.format, items: Fixture.rss20MB.items, directory: directory),
            try Fixture.ensure(name: Fixture.atom20MB.name, format: Fixture.atom20MB.format, items: Fixture.atom20MB.items, directory: directory),
        ]
        var memoryFixtures = [timedFixtures[0]]
        if !options.quick {
            memoryFixtures.append(try Fixture.ensure(name: Fixture.rss200MB.name, format: Fixture.rss200MB.format,
                                                     items: Fixture.rss200MB.items, directory: directory))
        }

        var feeds: [FeedResult] = []
        for fixture in timedFixtures {
            feeds.append(try timeFeed(fixture))
        }
        var memory: [MemoryResult] = []
        if !options.skipMemory {
            for fixture in memoryFixtures {
                memory += probeFeed(fixture)
            }
        }
        let report = BenchmarkReport(
            tool: "feedingest-bench", generatorVersion: FeedGenerator.version, build: isDebugBuild ? "debug" : "release",
            cores: ProcessInfo.processInfo.activeProcessorCount, chunkBytes: options.chunkSize, rounds: options.rounds,
            warmupRounds: options.warmupRounds, quick: options.quick, feeds: feeds, memory: memory,
            totalSeconds: Double(monotonicNanos() - started) / 1e9, loadAverage: [loadAtStart, Self.loadAverage()])
        Report.printTables(report)
        Report.printJSON(report)
        let allVerified = feeds.allSatisfy { $0.variants.allSatisfy { $0.ok || $0.variant == .foundationData } }
            && memory.allSatisfy { $0.ok || $0.variant == .foundationData }
        return allVerified ? 0 : 1
    }

    static func loadAverage() -> Double {
        var loads = [0.0, 0.0, 0.0]
        return getloadavg(&loads, 3) > 0 ? loads[0] : .nan
    }

    /// Paired, alternating rounds over one feed held in memory: every round runs every variant once, in order.
    private func timeFeed(_ fixture: Fixture) throws -> FeedResult {
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.path))
        guard data.count == fixture.manifest.bytes else { throw FixtureError(message: "\(fixture.path) changed size") }
        let format = fixture.manifest.format
        var outcomes: [Variant: [RunOutcome]] = [:]
        var cFirstItem: [Double] = []
        let total = options.warmupRounds + options.rounds
        for round in 0..<total {
            let counted = round >= options.warmupRounds
            log("\(fixture.name): \(counted ? "round \(round - options.warmupRounds + 1)/\(options.rounds)" : "warm-up")…")
            for variant in Variant.timed {
                let outcome = Runner.run(variant, input: .memory(data), format: format, chunkSize: options.chunkSize,
                                         manifest: fixture.manifest)
                if counted { outcomes[variant, default: []].append(outcome) }
            }
            if counted, let first = Runner.cFirstItemSeconds(data, format: format, chunkSize: options.chunkSize) {
                cFirstItem.append(first)
            }
        }
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
                megabytesPerSecond: Double(fixture.manifest.bytes) / median / 1e6,
                ratioToC: Summary(zip(seconds, cSeconds).map { $0 / $1 }),
                ratioToXMLParserStream: Summary(zip(seconds, streamSeconds).map { $0 / $1 }),
                cpuRatioToC: Summary(zip(cpu, cCPU).map { $0 / $1 }),
                firstItemMs: Summary(firstItem)?.scaled(by: 1000))
        }
        return FeedResult(name: fixture.name, format: format, bytes: fixture.manifest.bytes, items: fixture.manifest.items,
                          elements: fixture.manifest.elements, variants: variants)
    }

    /// One child per variant, streaming the file from disk; the parent takes ru_maxrss from wait4.
    private func probeFeed(_ fixture: Fixture) -> [MemoryResult] {
        ([.idle] + Variant.timed).map { variant in
            log("\(fixture.name): peak-RSS probe \(variant.rawValue)…")
            let result = Probe.spawnMeasured(["--probe", variant.rawValue, fixture.path])
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
    /// From before the parser is created to the first item's (or entry's) start tag, in milliseconds.
    var firstItemMs: Summary?
}

struct FeedResult: Codable {
    var name: String
    var format: FeedFormat
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
    var chunkBytes: Int
    var rounds: Int
    var warmupRounds: Int
    var quick: Bool
    var feeds: [FeedResult]
    var memory: [MemoryResult]
    var totalSeconds: Double
    /// The 1-minute load average at the start and at the end: other work on the machine disturbs wall times.
    var loadAverage: [Double]
}
