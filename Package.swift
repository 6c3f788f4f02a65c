// swift-tools-version:6.0
import PackageDescription

/// Debian's -dev packages provide every C library; `make setup` installs the missing ones.
let package = Package(
    name: "feedingest",
    products: [
        .library(name: "ExpatXML", targets: ["ExpatXML"]),
        .library(name: "ArticleStore", targets: ["ArticleStore"]),
        .library(name: "Fetch", targets: ["Fetch"]),
        .library(name: "XMLFetching", targets: ["XMLFetching"]),
        .library(name: "Syndication", targets: ["Syndication"]),
        .library(name: "Ingest", targets: ["Ingest"]),
        .executable(name: "feedingest", targets: ["feedingest"]),
        .executable(name: "feedingest-bench", targets: ["ExpatBench"]),
    ],
    targets: [
        .systemLibrary(name: "CExpat", pkgConfig: "expat", providers: [.apt(["libexpat1-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CXXHash", pkgConfig: "libxxhash", providers: [.apt(["libxxhash-dev"])]),

        .target(name: "ExpatXML", dependencies: ["CExpat"]),
        .target(name: "ArticleStore", dependencies: ["CSQLite", "CXXHash", "Syndication"]),
        .target(name: "Fetch", dependencies: ["CCurl", "CZlib", "CCrypto"]),
        .target(name: "XMLFetching", dependencies: ["Fetch", "ExpatXML"]),
        .target(name: "Syndication", dependencies: ["ExpatXML"]),
        .target(name: "Ingest", dependencies: ["Fetch", "XMLFetching", "Syndication", "ArticleStore", "ExpatXML"]),
        .executableTarget(name: "feedingest", dependencies: ["Syndication", "ExpatXML", "Fetch", "Ingest", "ArticleStore"]),

        .target(name: "CExpatNoop", dependencies: ["CExpat"], path: "Benchmarks/CExpatNoop"),
        .executableTarget(
            name: "ExpatBench",
            dependencies: ["ExpatXML", "Syndication", "Fetch", "XMLFetching", "ArticleStore", "CExpatNoop", "CZlib"],
            path: "Benchmarks/ExpatBench"
        ),

        .testTarget(name: "ExpatXMLTests", dependencies: ["ExpatXML"]),
        // Test-only: the child process the ArticleStore tests kill, and a throughput benchmark (`swift run -c release StoreProbe bench`).
        .executableTarget(name: "StoreProbe", dependencies: ["ArticleStore", "Syndication"], path: "Tests/StoreProbe"),
        .testTarget(name: "ArticleStoreTests", dependencies: ["ArticleStore", "Syndication", "CSQLite", "StoreProbe"], exclude: ["Fixtures"]),
        .testTarget(name: "FetchTests", dependencies: ["Fetch", "XMLFetching", "ExpatXML", "CZlib", "Syndication"]),
        .testTarget(name: "SyndicationTests", dependencies: ["Syndication", "ExpatXML"]),
        .testTarget(name: "feedingestTests", dependencies: ["Ingest", "feedingest"]),  // Ingest: FeedList reads what export-opml wrote; feedingest: its stream types
        .testTarget(name: "IngestTests", dependencies: ["Ingest", "ArticleStore", "Syndication", "Fetch"]),
        .testTarget(name: "CLibrariesTests", dependencies: ["CCurl", "CZlib", "CSQLite", "CExpat", "CCrypto", "CXXHash"]),
    ],
    swiftLanguageModes: [.v6]
)
