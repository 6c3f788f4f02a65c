import ArticleStore
import Fetch
import Foundation

/// The `hash` section: the two hashes the pipeline computes, alone, in memory.
///
/// - SHA-256 (`Fetch.SHA256`) fingerprints each body as it streams, in the pieces libcurl delivers (16 KiB here).
/// - XXH64 (`ArticleHasher.xxHash64`) is the store's content hash over an article's encoding (about 1.6 KB in the
///   store benchmark) and the key hash over its key (a guid or URL, about 40 bytes).
///
/// Each case runs `rounds` counted rounds after one warm-up; every round hashes the same bytes, and its result is
/// checked against the first round's (and SHA-256's against a NIST vector), so a broken hash cannot look fast.
enum HashBench {
    struct Case {
        var name: String
        var title: String
        /// Bytes one hash call covers.
        var inputBytes: Int
        /// Hash calls per round.
        var calls: Int
        /// One round; returns a value folded from every result, to check and to keep the work from being optimised out.
        var run: () -> UInt64
    }

    static func cases() -> [Case] {
        let megabyte = [UInt8]((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let article = Array(megabyte.prefix(1600))
        let key = Array("https://example.com/articles/2026/12/01/a-title-of-some-length".utf8)
        return [
            Case(name: "sha256-16k-chunks", title: "SHA-256, 64 MiB in 16 KiB updates", inputBytes: 64 << 20, calls: 1) {
                var hash = SHA256()
                megabyte.withUnsafeBytes { bytes in
                    for _ in 0..<64 {
                        var offset = 0
                        while offset < bytes.count {
                            hash.update(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 16 << 10)]))
                            offset += 16 << 10
                        }
                    }
                }
                return fold(hash.finalize().bytes)
            },
            Case(name: "sha256-1600", title: "SHA-256, one 1,600-byte message", inputBytes: 1600, calls: 20_000) {
                var folded: UInt64 = 0
                for _ in 0..<20_000 { folded &+= fold(SHA256.hash(article).bytes) }
                return folded
            },
            Case(name: "xxh64-1m", title: "XXH64, 1 MiB", inputBytes: 1 << 20, calls: 256) {
                var folded: UInt64 = 0
                megabyte.withUnsafeBytes { bytes in
                    for seed in 0..<UInt64(256) { folded &+= ArticleHasher.xxHash64(bytes, seed: seed) }
                }
                return folded
            },
            Case(name: "xxh64-1600", title: "XXH64, 1,600 bytes (an article's encoding)", inputBytes: 1600, calls: 200_000) {
                var folded: UInt64 = 0
                article.withUnsafeBytes { bytes in
                    for seed in 0..<UInt64(200_000) { folded &+= ArticleHasher.xxHash64(bytes, seed: seed) }
                }
                return folded
            },
            Case(name: "xxh64-key", title: "XXH64, \(key.count) bytes (a key)", inputBytes: key.count, calls: 1_000_000) {
                var folded: UInt64 = 0
                key.withUnsafeBytes { bytes in
                    for seed in 0..<UInt64(1_000_000) { folded &+= ArticleHasher.xxHash64(bytes, seed: seed) }
                }
                return folded
            },
        ]
    }

    static func fold(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }

    static func run(rounds: Int) -> [HashResult] {
        // One NIST vector first: the SHA-256 being timed must be SHA-256.
        var million = SHA256()
        let block = [UInt8](repeating: 0x61, count: 1000)
        for _ in 0..<1000 { million.update(block) }
        let nistOK = million.finalize().hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        // And one xxHash sanity vector (xxHash's own self-test): XXH64 of an empty input, seed 0.
        let xxhOK = [UInt8]().withUnsafeBytes { ArticleHasher.xxHash64($0) } == 0xEF46_DB37_51D8_E999
        return cases().map { testCase in
            log("hash: \(testCase.name)…")
            let expected = testCase.run()  // the warm-up round
            var seconds: [Double] = []
            var ok = testCase.name.hasPrefix("sha256") ? nistOK : xxhOK
            for _ in 0..<rounds {
                let start = monotonicNanos()
                let value = testCase.run()
                seconds.append(Double(monotonicNanos() - start) / 1e9)
                ok = ok && value == expected
            }
            let median = Summary(seconds)!.median
            let bytes = Double(testCase.inputBytes) * Double(testCase.calls)
            return HashResult(name: testCase.name, title: testCase.title, ok: ok, inputBytes: testCase.inputBytes,
                              calls: testCase.calls, roundMs: Summary(seconds)!.scaled(by: 1000),
                              megabytesPerSecond: bytes / median / 1e6,
                              nanosecondsPerCall: median * 1e9 / Double(testCase.calls))
        }
    }

    static func table(_ results: [HashResult], rounds: Int) -> [String] {
        guard !results.isEmpty else { return [] }
        let lines = ["", "Hashes in memory (median [min-max] over \(rounds) rounds after a warm-up; every round's result checked)"]
        var rows = [["case", "status", "round ms", "MB/s", "ns per call"]]
        for result in results {
            rows.append([
                result.title, result.ok ? "ok" : "FAILED",
                "\(Report.fixed(result.roundMs.median, 1)) [\(Report.fixed(result.roundMs.min, 1))-\(Report.fixed(result.roundMs.max, 1))]",
                Report.fixed(result.megabytesPerSecond, 0), Report.fixed(result.nanosecondsPerCall, 1),
            ])
        }
        return lines + Report.table(rows, rightAligned: [false, false, true, true, true])
    }
}

struct HashResult: Codable {
    var name: String
    var title: String
    var ok: Bool
    var inputBytes: Int
    var calls: Int
    var roundMs: Summary
    /// Input bytes over the median round, in 10^6 bytes a second.
    var megabytesPerSecond: Double
    var nanosecondsPerCall: Double
}
