import Foundation
import Testing

/// A static HTTP server on 127.0.0.1 (Python's http.server), serving one directory, stopped at deinit.
final class StaticServer {
    let process = Process()
    let port: Int

    init(directory: URL) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory", directory.path, "0"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // "Serving HTTP on 127.0.0.1 port 41235 (http://127.0.0.1:41235/) ..."
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: "port "), let port = Int(text[range.upperBound...].prefix { $0.isNumber }) else {
            kill(process.processIdentifier, SIGKILL)
            throw CocoaError(.fileReadUnknown)
        }
        self.port = port
    }

    deinit {
        // SIGKILL: a child of the test runner inherits its blocked signal mask, so SIGTERM may never arrive.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

@Suite("feedingest parse URL")
struct ParseURLTests {
    @Test func fetchesAndParsesOverHTTPAndReportsHTTPErrors() throws {
        let server = try StaticServer(directory: Paths.realworld)
        let base = "http://127.0.0.1:\(server.port)"
        let result = try CommandRunner.run(["parse", "\(base)/atp.rss", "\(base)/missing.xml", "--report", "/dev/null"])
        #expect(result.status == 1)
        #expect(result.lines.count == 100)
        #expect(result.lines.first?.contains("\"feed\":\"\(base)/atp.rss\"") == true)
        #expect(result.stderr.contains("feedingest: \(base)/missing.xml:"))
        #expect(result.stderr.contains("404"))
        let refused = try CommandRunner.run(["parse", "http://127.0.0.1:1/feed.xml"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("http://127.0.0.1:1/feed.xml"))
        let invalid = try CommandRunner.run(["parse", "http://"])
        #expect(invalid.status == 1)
        #expect(invalid.stderr.contains("not a valid URL"))
    }
}
