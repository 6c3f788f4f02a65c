import Foundation
import TestSupport
import Testing

/// Streaming a 200 MB feed to NDJSON keeps memory flat: measured in a child process, asserted on memory only.
@Suite("feedingest parse memory", .disabled(if: SanitizerRun.isActive, "peak-memory bounds do not hold under a sanitizer's shadow memory"))
struct ParseMemoryTests {
    /// 160,000 items of about 1.3 KB: over 200 MB of RSS, generated on the fly and piped in.
    static let items = 160_000

    @Test func streamingA200MBFeedToNDJSONStaysUnder32MiB() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Paths.script("peak_rss.py").path,
                             CommandRunner.binary.path, "parse", "-"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let written = try FeedFixture.streamRSS(items: Self.items, to: input.fileHandleForWriting)
        try input.fileHandleForWriting.close()
        let result = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let report = try #require(try JSONSerialization.jsonObject(with: result) as? [String: Any], "no report from peak_rss.py")
        let peakMiB = Double(report["maxrss_kib"] as? Int ?? 0) / 1024
        print(String(format: "feedingest parse: %.1f MB of RSS (%d items) to NDJSON on /dev/null: peak RSS %.1f MiB", Double(written) / 1e6, Self.items, peakMiB))
        #expect(report["status"] as? Int == 0)
        #expect(written > 200_000_000)
        #expect(peakMiB > 0 && peakMiB < 32, "peak RSS \(peakMiB) MiB")
    }

    /// The same for a JSON Feed of over 200 MB: the JSON path streams too.
    @Test func streamingA200MBJSONFeedToNDJSONStaysUnder32MiB() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Paths.script("peak_rss.py").path, CommandRunner.binary.path, "parse", "-"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let items = 170_000  // about 1.2 KB each
        let written = try FeedFixture.streamJSONFeed(items: items, to: input.fileHandleForWriting)
        try input.fileHandleForWriting.close()
        let result = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let report = try #require(try JSONSerialization.jsonObject(with: result) as? [String: Any], "no report from peak_rss.py")
        let peakMiB = Double(report["maxrss_kib"] as? Int ?? 0) / 1024
        print(String(format: "feedingest parse: %.1f MB of JSON Feed (%d items) to NDJSON on /dev/null: peak RSS %.1f MiB", Double(written) / 1e6, items, peakMiB))
        #expect(report["status"] as? Int == 0)
        #expect(written > 200_000_000)
        #expect(peakMiB > 0 && peakMiB < 32, "peak RSS \(peakMiB) MiB")
    }
}
