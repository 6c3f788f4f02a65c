import Foundation
import TestSupport
import Testing

/// libcurl, libpq and libsystemd are opened on their first call (CLibraryLoader), not by the dynamic loader at start-up:
/// a command that never fetches, reaches PostgreSQL or talks to systemd does not map their 30-odd libraries (issue 18).
@Suite("feedingest: libraries opened on first use")
struct LibraryLoadingTests {
    static let lazyLibraries: Set = ["libcurl.so.4", "libpq.so.5", "libsystemd.so.0"]

    /// Runs the command with the dynamic loader's own trace (`LD_DEBUG=files`) and returns what it opened, by file name.
    static func opened(_ arguments: [String]) throws -> (result: CommandRunner.Result, libraries: Set<String>) {
        var environment = ProcessInfo.processInfo.environment
        environment["LD_DEBUG"] = "files"
        let result = try CommandRunner.run(arguments, environment: environment)
        var libraries: Set<String> = []
        for line in result.stderr.split(separator: "\n") {
            // "  1234:	file=libcurl.so.4 [0];  dynamically loaded by ./feedingest [0]" (or "needed by …")
            guard let range = line.range(of: "file=") else { continue }
            let rest = line[range.upperBound...]
            guard let end = rest.firstIndex(of: " "), rest[end...].contains("needed by") || rest[end...].contains("loaded by") else { continue }
            libraries.insert(String(rest[..<end]))
        }
        return (result, libraries)
    }

    @Test func parsingAFileOpensNeitherLibcurlNorLibpqNorLibsystemd() throws {
        let (result, libraries) = try Self.opened(["parse", Paths.packageRoot.appendingPathComponent("examples/rss2-enclosures.xml").path])
        #expect(result.status == 0, "\(result.stderr.suffix(2_000))")
        #expect(result.lines.count > 0)
        // The trace works: libexpat, which parsing needs, was opened at start-up.
        #expect(libraries.contains("libexpat.so.1"), "\(libraries.sorted())")
        #expect(libraries.isDisjoint(with: Self.lazyLibraries), "\(libraries.intersection(Self.lazyLibraries).sorted())")
        let (version, opened) = try Self.opened(["--version"])
        #expect(version.status == 0)
        #expect(opened.isDisjoint(with: Self.lazyLibraries))
    }

    @Test func fetchingOpensLibcurlOnItsFirstCall() throws {
        let server = try NginxServer(.init(root: Paths.realworld))
        let (result, libraries) = try Self.opened(["parse", "http://127.0.0.1:\(server.port)/atp.rss"])
        #expect(result.status == 0, "\(result.stderr.suffix(2_000))")
        #expect(result.lines.count == 100)
        #expect(libraries.contains("libcurl.so.4"), "\(libraries.sorted())")
        #expect(!libraries.contains("libpq.so.5"))
        // Opened by the program (dlopen), not listed as needed at start-up.
        #expect(result.stderr.contains("file=libcurl.so.4 [0];  dynamically loaded by"))
    }
}
