import Foundation
import TestSupport
import Testing

/// Streaming a 200 MB feed to NDJSON keeps memory flat: measured in a child process, asserted on memory only.
@Suite("feedingest parse memory", .disabled(if: SanitizerRun.isActive, "peak-memory bounds do not hold under a sanitizer's shadow memory"))
struct ParseMemoryTests {
    /// 160,000 items of about 1.3 KB: over 200 MB of RSS, generated on the fly and piped in.
    static let items = 160_000

    /// Runs `feedingest parse -` under peak_rss.py with `write` feeding its stdin; returns the bytes written and the
    /// peak RSS in MiB.
    static func peakOfParse(_ write: (FileHandle) throws -> Int) throws -> (written: Int, peakMiB: Double) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Paths.script("peak_rss.py").path, CommandRunner.binary.path, "parse", "-"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let written = try write(input.fileHandleForWriting)
        try input.fileHandleForWriting.close()
        let result = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let report = try #require(try JSONSerialization.jsonObject(with: result) as? [String: Any], "no report from peak_rss.py")
        #expect(report["status"] as? Int == 0)
        return (written, Double(report["maxrss_kib"] as? Int ?? 0) / 1024)
    }

    /// Memory stays flat: the 200 MB feed's peak is within 4 MiB of the same command's peak on a feed of 100 items
    /// (the floor: the binary, its libraries and buffers), and under 64 MiB in all.
    static let allowedGrowthMiB = 4.0

    @Test func streamingA200MBFeedToNDJSONStaysFlat() throws {
        let floor = try Self.peakOfParse { try FeedFixture.streamRSS(items: 100, to: $0) }
        let large = try Self.peakOfParse { try FeedFixture.streamRSS(items: Self.items, to: $0) }
        print(String(format: "feedingest parse: %.1f MB of RSS (%d items) to NDJSON on /dev/null: peak RSS %.1f MiB (100 items: %.1f MiB)",
                     Double(large.written) / 1e6, Self.items, large.peakMiB, floor.peakMiB))
        #expect(large.written > 200_000_000)
        #expect(floor.peakMiB > 0 && large.peakMiB < 64)
        #expect(large.peakMiB - floor.peakMiB < Self.allowedGrowthMiB, "peak RSS \(large.peakMiB) MiB against \(floor.peakMiB) MiB")
    }

    /// The same for a JSON Feed of over 200 MB: the JSON path streams too.
    @Test func streamingA200MBJSONFeedToNDJSONStaysFlat() throws {
        let items = 170_000  // about 1.2 KB each
        let floor = try Self.peakOfParse { try FeedFixture.streamJSONFeed(items: 100, to: $0) }
        let large = try Self.peakOfParse { try FeedFixture.streamJSONFeed(items: items, to: $0) }
        print(String(format: "feedingest parse: %.1f MB of JSON Feed (%d items) to NDJSON on /dev/null: peak RSS %.1f MiB (100 items: %.1f MiB)",
                     Double(large.written) / 1e6, items, large.peakMiB, floor.peakMiB))
        #expect(large.written > 200_000_000)
        #expect(floor.peakMiB > 0 && large.peakMiB < 64)
        #expect(large.peakMiB - floor.peakMiB < Self.allowedGrowthMiB, "peak RSS \(large.peakMiB) MiB against \(floor.peakMiB) MiB")
    }
}
