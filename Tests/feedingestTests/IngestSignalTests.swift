import Foundation
import TestSupport
import Testing

@Suite("feedingest ingest, signals")
struct IngestSignalTests {
    @Test func sigtermKeepsWhatIsCompleteAndTheNextRunFinishesWithoutDuplicates() throws {
        let server = try FeedServer(delay: 0.3, root: Paths.realworld)
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        let feeds = 12
        try Data((1...feeds).map { "http://127.0.0.1:\(server.port)/atp.rss?\($0)" }.joined(separator: "\n").utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")

        let process = Process()
        process.executableURL = CommandRunner.binary
        process.arguments = [list.path, "--store", store.path, "--jobs", "1"]
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Wait for the first feed's articles, then interrupt.
        var stdout = Data()
        while stdout.filter({ $0 == 0x0A }).count < 100 {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            stdout.append(chunk)
        }
        kill(process.processIdentifier, SIGTERM)
        stdout.append(output.fileHandleForReading.readDataToEndOfFile())
        let stderr = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 143, "\(stderr)")
        #expect(stderr.contains("cancelled"), "\(stderr)")
        let first = String(decoding: stdout, as: UTF8.self).split(separator: "\n").count
        #expect(first >= 100 && first < feeds * 100, "\(stderr)")
        #expect(try IngestCommandTests.count("articles", in: store) == first)

        let second = try CommandRunner.run([list.path, "--store", store.path, "--jobs", "4"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(first + second.lines.count == feeds * 100)
        #expect(try IngestCommandTests.count("articles", in: store) == feeds * 100)
        let ids = Set((String(decoding: stdout, as: UTF8.self).split(separator: "\n").map(String.init) + second.lines).compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return "\(object["feed"] ?? "")|\(object["id"] ?? "")"
        })
        #expect(ids.count == feeds * 100)
    }
}
