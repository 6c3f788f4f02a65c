// swift-tools-version:6.0
import PackageDescription

/// The command's memory allocator, jemalloc (Sources/feedingest/Allocator.swift); sanitizer builds (`make test-tsan`,
/// `make test-asan`) keep their runtime's own malloc instead.
let commandAllocator: [Target.Dependency] =
    Context.environment["FEEDINGEST_TSAN"] != nil || Context.environment["FEEDINGEST_ASAN"] != nil ? [] : ["CJemalloc"]

/// Debian's -dev packages provide every C library; `make setup` installs the missing ones.
let package = Package(
    name: "feedingest",
    products: [
        .library(name: "ExpatXML", targets: ["ExpatXML"]),
        .library(name: "StreamingJSON", targets: ["StreamingJSON"]),
        .library(name: "ArticleStore", targets: ["ArticleStore"]),
        .library(name: "PostgresStore", targets: ["PostgresStore"]),
        .library(name: "Fetch", targets: ["Fetch"]),
        .library(name: "XMLFetching", targets: ["XMLFetching"]),
        .library(name: "Syndication", targets: ["Syndication"]),
        .library(name: "SafeHTML", targets: ["SafeHTML"]),
        .library(name: "Ingest", targets: ["Ingest"]),
        .library(name: "Scheduling", targets: ["Scheduling"]),
        .library(name: "Reachability", targets: ["Reachability"]),
        .library(name: "FileWatch", targets: ["FileWatch"]),
        .library(name: "SystemdNotify", targets: ["SystemdNotify"]),
        .library(name: "Watch", targets: ["Watch"]),
        .library(name: "Downloads", targets: ["Downloads"]),
        .executable(name: "feedingest", targets: ["feedingest"]),
        .executable(name: "feedingest-bench", targets: ["ExpatBench"]),
        .executable(name: "feedingest-cnoop", targets: ["CExpatNoopCommand"]),
        .executable(name: "feedingest-store-bench", targets: ["StoreBench"]),
        .executable(name: "feedingest-fetch-bench", targets: ["FetchBench"]),
        .executable(name: "feedingest-download-bench", targets: ["DownloadBench"]),
    ],
    targets: [
        .systemLibrary(name: "CExpat", pkgConfig: "expat", providers: [.apt(["libexpat1-dev"])]),
        // CCurl, CLibPQ, CSystemd and CCrypto are headers only: CLibraryLoader's stubs open their libraries on first use,
        // so that a command that does not need them does not map their 30-odd libraries at start-up (issue 18; ~6.5 ms).
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // The gzip trailer's CRC-32 (zlib 1.2.13's own costs ~4 instructions a byte; libdeflate's folds with PCLMULQDQ).
        .systemLibrary(name: "CLibDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CNetlink", pkgConfig: "libmnl", providers: [.apt(["libmnl-dev"])]),
        .systemLibrary(name: "CSystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CXXHash", pkgConfig: "libxxhash", providers: [.apt(["libxxhash-dev"])]),
        .systemLibrary(name: "CYajl", pkgConfig: "yajl", providers: [.apt(["libyajl-dev"])]),
        .systemLibrary(name: "CUchardet", pkgConfig: "uchardet", providers: [.apt(["libuchardet-dev"])]),
        .systemLibrary(name: "CLibPQ", providers: [.apt(["libpq-dev"])]),
        // The command's memory allocator (Sources/feedingest/Allocator.swift): its threads hand articles from the parser
        // to the store and the output, so most memory is freed on another thread than the one that allocated it, which
        // glibc's malloc serves through locked arenas (issue 18).
        .systemLibrary(name: "CJemalloc", pkgConfig: "jemalloc", providers: [.apt(["libjemalloc-dev"])]),
        .target(name: "CLibraryLoader"),
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        // Not a library: a header of `static inline` C (SSE2, with a portable fallback) for the repair filter's wide scan.
        .systemLibrary(name: "CByteScan"),

        .target(name: "ExpatXML", dependencies: ["CExpat", "CUchardet", "CByteScan", "Support"], exclude: ["README.md"]),
        .target(name: "StreamingJSON", dependencies: ["CYajl", "Support"], exclude: ["README.md"]),
        .target(name: "ArticleStore", dependencies: ["CSQLite", "CXXHash", "CByteScan", "Syndication", "Scheduling", "Support"],
                exclude: ["README.md"]),
        // The PostgreSQL engine of the store (libpq); the SQLite engine lives in ArticleStore beside the contract.
        .target(name: "PostgresStore", dependencies: ["ArticleStore", "CLibPQ", "CLibraryLoader", "Syndication", "Scheduling", "Support"],
                exclude: ["README.md"]),
        .target(name: "Fetch", dependencies: ["CCurl", "CLibraryLoader", "CZlib", "CLibDeflate", "CCrypto", "Support"], exclude: ["README.md"]),
        .target(name: "XMLFetching", dependencies: ["Fetch", "ExpatXML"]),
        // The HTML sanitiser (`--sanitize`): libxml2's HTML parser and an allow-list.
        .target(name: "SafeHTML", dependencies: ["CLibXML2"], exclude: ["README.md"]),
        .target(name: "Syndication", dependencies: ["ExpatXML", "StreamingJSON", "SafeHTML", "CByteScan", "Support"], exclude: ["README.md"]),
        .target(name: "Ingest", dependencies: ["Fetch", "XMLFetching", "Syndication", "ArticleStore", "ExpatXML", "Scheduling", "Support"]),
        .target(name: "Scheduling"),
        // The foundation every module shares, without C: Errno, Lock, Duration conversions, FeedHost, UTF-8 checks,
        // chunked file reading, redaction.
        .target(name: "Support"),
        .target(name: "Reachability", dependencies: ["CNetlink", "Support"]),
        .target(name: "FileWatch", dependencies: ["Support"]),
        .target(name: "SystemdNotify", dependencies: ["CSystemd", "CLibraryLoader"]),
        // The service (`feedingest watch`): the pipeline under a due-time scheduler, with reachability.
        .target(name: "Watch", dependencies: ["Ingest", "ArticleStore", "Fetch", "Scheduling", "Reachability", "Support"]),
        // The enclosure download manager: the queue, the tracker's rules, resume by HTTP's rules, retention.
        .target(name: "Downloads", dependencies: ["Fetch", "ArticleStore", "Support"], exclude: ["README.md"]),
        .executableTarget(name: "feedingest", dependencies: ["Syndication", "ExpatXML", "Fetch", "Ingest", "ArticleStore", "PostgresStore",
                                                             "Watch", "Scheduling", "FileWatch", "SystemdNotify", "Downloads", "Support"]
                                                             + commandAllocator),

        // Helpers shared by every test target and the benchmarks: loopback servers (nginx, scripts/*.py), free ports,
        // child processes, repository paths, SplitMix64, generated feeds and articles, gzip/deflate fixtures.
        .target(name: "TestSupport", dependencies: ["CZlib", "Syndication", "Support"], path: "Tests/TestSupport"),

        .target(name: "CExpatNoop", dependencies: ["CExpat"], path: "Benchmarks/CExpatNoop"),
        .target(name: "CYajlNoop", dependencies: ["CYajl"], path: "Benchmarks/CYajlNoop"),
        // The whole-process floor: a C program that parses a file with raw libexpat and no-op handlers (`make bench`'s
        // `process` section runs it beside `feedingest parse`).
        .executableTarget(name: "CExpatNoopCommand", dependencies: ["CExpatNoop"], path: "Benchmarks/CExpatNoopCommand"),
        .executableTarget(
            name: "ExpatBench",
            dependencies: ["ExpatXML", "Syndication", "Fetch", "XMLFetching", "ArticleStore", "PostgresStore", "CExpatNoop", "StreamingJSON", "CYajlNoop",
                           "TestSupport", "Support"],
            path: "Benchmarks/ExpatBench"
        ),
        .executableTarget(name: "StoreBench", dependencies: ["ArticleStore", "Syndication", "TestSupport", "Support"], path: "Benchmarks/StoreBench"),
        .executableTarget(name: "FetchBench", dependencies: ["ExpatXML", "Fetch", "XMLFetching", "TestSupport", "Support"], path: "Benchmarks/FetchBench"),
        .executableTarget(name: "DownloadBench", dependencies: ["TestSupport"], path: "Benchmarks/DownloadBench"),

        .testTarget(name: "ExpatXMLTests", dependencies: ["ExpatXML", "CByteScan", "TestSupport"]),
        .testTarget(name: "StreamingJSONTests", dependencies: ["StreamingJSON", "TestSupport"]),
        // Test-only: the child process the ArticleStore tests kill (`StoreProbe ingest`).
        .executableTarget(name: "StoreProbe", dependencies: ["ArticleStore", "PostgresStore", "TestSupport"], path: "Tests/StoreProbe"),
        .testTarget(name: "ArticleStoreTests", dependencies: ["ArticleStore", "PostgresStore", "Syndication", "Scheduling", "CSQLite", "StoreProbe", "TestSupport", "Support"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "FetchTests", dependencies: ["Fetch", "XMLFetching", "ExpatXML", "Syndication", "TestSupport", "Support"]),
        .testTarget(name: "SafeHTMLTests", dependencies: ["SafeHTML"]),
        .testTarget(name: "SyndicationTests", dependencies: ["Syndication", "ExpatXML", "StreamingJSON", "TestSupport"]),
        // Ingest: FeedList reads what export-opml wrote; feedingest: its stream types.
        .testTarget(name: "feedingestTests", dependencies: ["Ingest", "feedingest", "ArticleStore", "PostgresStore", "Downloads", "TestSupport", "Support"]),
        .testTarget(name: "IngestTests", dependencies: ["Ingest", "ArticleStore", "PostgresStore", "Syndication", "Fetch", "TestSupport", "Support"]),
        .testTarget(name: "SupportTests", dependencies: ["Support"]),
        .testTarget(name: "SchedulingTests", dependencies: ["Scheduling", "Support"]),
        .testTarget(name: "DownloadsTests", dependencies: ["Downloads", "Fetch", "ArticleStore", "PostgresStore", "Syndication", "TestSupport", "Support"]),
        .testTarget(name: "FileWatchTests", dependencies: ["FileWatch", "Support"]),
        .testTarget(name: "SystemdNotifyTests", dependencies: ["SystemdNotify"]),
        .testTarget(name: "WatchTests", dependencies: ["Watch", "Ingest", "ArticleStore", "Scheduling", "Support"]),
        // Test-only: prints the route monitor's snapshots, run by the tests in a network namespace of its own.
        .executableTarget(name: "RouteProbe", dependencies: ["Reachability"], path: "Tests/RouteProbe"),
        .testTarget(name: "ReachabilityTests", dependencies: ["Reachability", "RouteProbe", "TestSupport"]),
        .testTarget(name: "CLibrariesTests", dependencies: ["CCurl", "CZlib", "CSQLite", "CExpat", "CCrypto", "CXXHash", "CYajl", "CUchardet", "CLibPQ", "CLibraryLoader"]),
    ],
    swiftLanguageModes: [.v6]
)

// The libFuzzer harnesses (`make fuzz`): one executable whose entry is LLVMFuzzerTestOneInput, built only when
// FEEDINGEST_FUZZ is set, with -sanitize=fuzzer,address, so the ordinary build and `--build-tests` never see it.
if Context.environment["FEEDINGEST_FUZZ"] != nil {
    package.products.append(.executable(name: "feedingest-fuzz", targets: ["FeedingestFuzz"]))
    package.targets.append(.executableTarget(
        name: "FeedingestFuzz",
        dependencies: ["ExpatXML", "Syndication", "SafeHTML", "Fetch", "Ingest"],
        path: "Fuzz/FeedingestFuzz",
        swiftSettings: [.unsafeFlags(["-parse-as-library"])]
    ))
}

// ThreadSanitizer builds (`make test-tsan`): Support's `Lock`, every module's lock, becomes a pthread-mutex lock of
// Synchronization.Mutex's shape that TSan can see (Sanitizers/TSanMutex explains why).
if Context.environment["FEEDINGEST_TSAN"] != nil {
    package.targets.append(.target(name: "TSanMutex", path: "Sanitizers/TSanMutex"))
    for target in package.targets where target.name == "Support" {
        target.dependencies.append("TSanMutex")
        target.swiftSettings = (target.swiftSettings ?? []) + [.define("FEEDINGEST_TSAN")]
    }
}
