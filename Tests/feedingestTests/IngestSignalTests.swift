import Foundation
import Testing

/// A loopback HTTP server (Python's threading http.server) that waits `delay` seconds before every response.
final class SlowServer {
    let process = Process()
    let port: Int

    init(directory: URL, delay: Double) throws {
        let script = """
            import functools, http.server, sys, time
            class H(http.server.SimpleHTTPRequestHandler):
                def do_GET(self):
                    time.sleep(\(delay)); super().do_GET()
                def log_message(self, *args): pass
            s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(H, directory=sys.argv[1]))
            print("port", s.server_address[1], flush=True)
            s.serve_forever()
            """
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-c", script, directory.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).dropFirst(5).prefix { $0.isNumber }) else {
            kill(process.processIdentifier, SIGKILL)
            throw CocoaError(.fileReadUnknown)
        }
        self.port = port
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)  // SIGKILL: children inherit a blocked signal mask
        process.waitUntilExit()
    }
}

@Suite("feedingest ingest, signals")
struct IngestSignalTests {
    @Test func sigtermKeepsWhatIsCompleteAndTheNextRunFinishesWithoutDuplicates() throws {
        let server = try SlowServer(directory: Paths.realworld, delay: 0.3)
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
