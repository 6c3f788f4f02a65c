import Foundation
import TestSupport
import Testing

@Suite("feedingest parse URL")
struct ParseURLTests {
    @Test func fetchesAndParsesOverHTTPAndReportsHTTPErrors() throws {
        let server = try NginxServer(.init(root: Paths.realworld))
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

@Suite("feedingest parse URL: hostile headers")
struct ParseURLHeaderTests {
    /// Found by fuzzing: an empty `Content-Type` trapped in the media type's parser, so `feedingest parse URL` crashed on
    /// such a server. Now the feed is parsed by its first bytes, as without a type.
    @Test func emptyContentTypeIsParsedByItsBytes() throws {
        let faults = try FaultServer()
        let url = faults.url("/empty-headers?items=3").absoluteString
        let result = try CommandRunner.run(["parse", url])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.lines.count == 3)
    }
}
