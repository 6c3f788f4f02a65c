import Foundation
import TestSupport
import Testing

/// libcurl, libpq, libsystemd and libcrypto are opened on their first call (CLibraryLoader), not by the dynamic loader at
/// start-up: a command that never fetches, reaches PostgreSQL, talks to systemd or hashes a body does not map their 30-odd
/// libraries (issue 18).
@Suite("feedingest: libraries opened on first use")
struct LibraryLoadingTests {
    static let lazyLibraries: Set = ["libcurl.so.4", "libpq.so.5", "libsystemd.so.0", "libcrypto.so.3"]

    /// Runs the command with the dynamic loader's own trace (`LD_DEBUG=files`) and returns what it opened, by file name.
    static func opened(_ arguments: [String], trace: String = "files") throws -> (result: CommandRunner.Result, libraries: Set<String>) {
        var environment = ProcessInfo.processInfo.environment
        environment["LD_DEBUG"] = trace
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

    @Test func parsingAFileOpensNoneOfTheLazyLibraries() throws {
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
        let (result, libraries) = try Self.opened(["parse", "http://127.0.0.1:\(server.port)/atp.rss"], trace: "files,bindings")
        #expect(result.status == 0, "\(result.stderr.suffix(2_000))")
        #expect(result.lines.count == 100)
        #expect(libraries.contains("libcurl.so.4"), "\(libraries.sorted())")
        #expect(!libraries.contains("libpq.so.5"))
        // Opened by the program (dlopen), not listed as needed at start-up.
        #expect(result.stderr.contains("file=libcurl.so.4 [0];  dynamically loaded by"))
        // libcurl's calls of its own functions bind to libcurl, not to the program's stubs of the same names (which are
        // hidden): a stub run from inside dlopen would wait on the loader's lock forever.
        let binary = CommandRunner.binary.lastPathComponent
        let intoStubs = result.stderr.split(separator: "\n").filter {
            $0.contains("binding file") && $0.contains("libcurl.so.4") && $0.contains("/\(binary) [0]: normal symbol `curl_")
        }
        #expect(result.stderr.contains("binding file"), "the trace lists bindings")
        #expect(intoStubs.isEmpty, "\(intoStubs.prefix(3))")
    }

    /// A library that cannot be opened ends the command that needs it with a message naming it and its package; a
    /// command that does not need it runs as before (here libcurl is shadowed by an empty file on LD_LIBRARY_PATH).
    @Test func aLibraryThatCannotBeOpenedIsNamedWhenFirstNeeded() throws {
        let directory = try Paths.temporaryDirectory("feedingest-libraries")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data().write(to: directory.appendingPathComponent("libcurl.so.4"))
        var environment = ProcessInfo.processInfo.environment
        environment["LD_LIBRARY_PATH"] = directory.path
        let fetching = try CommandRunner.run(["parse", "http://127.0.0.1:1/feed.xml"], environment: environment)
        #expect(fetching.status == 1)
        #expect(fetching.stderr.contains("feedingest: cannot use libcurl.so.4 (Debian package libcurl4): "), "\(fetching.stderr)")
        #expect(fetching.stderr.contains(directory.path + "/libcurl.so.4"))
        let local = try CommandRunner.run(["parse", Paths.packageRoot.appendingPathComponent("examples/rss2-enclosures.xml").path],
                                          environment: environment)
        #expect(local.status == 0, "\(local.stderr)")
        #expect(local.lines.count > 0)
    }

    /// A library that opens but lacks a function feedingest calls (too old, or not libcurl at all) is named with the
    /// function, instead of a crash through a null pointer.
    @Test func aLibraryWithoutAFunctionIsNamedWithTheFunction() throws {
        let directory = try Paths.temporaryDirectory("feedingest-libraries")
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("empty.c")
        try Data("int feedingest_not_curl(void) { return 0; }\n".utf8).write(to: source)
        // The Swift toolchain's clang (it compiles the package's C targets), so no other compiler need be installed.
        let built = try ChildProcess.run("/usr/bin/env", ["clang", "-shared", "-fPIC", "-o", directory.appendingPathComponent("libcurl.so.4").path, source.path])
        #expect(built.status == 0, "\(built.standardError)")
        var environment = ProcessInfo.processInfo.environment
        environment["LD_LIBRARY_PATH"] = directory.path
        let fetching = try CommandRunner.run(["parse", "http://127.0.0.1:1/feed.xml"], environment: environment)
        #expect(fetching.status == 1)
        #expect(fetching.stderr.contains("feedingest: cannot use libcurl.so.4 (Debian package libcurl4): it has no function curl_"),
                "\(fetching.stderr)")
    }

    /// The stubs are hidden in their objects, so no link of them (the release command is linked with --export-dynamic)
    /// can put them in a program's dynamic symbol table, where the opened library's own calls would bind to them.
    @Test func theStubsAreHiddenSymbols() throws {
        let objects = CommandRunner.binary.deletingLastPathComponent().appendingPathComponent("CLibraryLoader.build")
        var stubs: [String: Int] = [:]
        for (object, prefix) in [("curl.c.o", "curl_"), ("libpq.c.o", "PQ"), ("systemd.c.o", "sd_"), ("crypto.c.o", "E")] {
            let listing = try ChildProcess.run("/usr/bin/readelf", ["-sW", objects.appendingPathComponent(object).path])
            #expect(listing.status == 0, "\(listing.standardError)")
            // "    77: 0000000000000220    93 FUNC    GLOBAL HIDDEN     2 curl_easy_init"
            for line in listing.standardOutput.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count >= 8, fields[3] == "FUNC", fields[4] == "GLOBAL", fields[7].hasPrefix(prefix) else { continue }
                #expect(fields[5] == "HIDDEN", "\(object): \(fields[7]) is \(fields[5])")
                stubs[object, default: 0] += 1
            }
        }
        #expect(stubs["curl.c.o", default: 0] >= 25 && stubs["libpq.c.o", default: 0] >= 25 && stubs["systemd.c.o"] == 2
                && stubs["crypto.c.o"] == 12, "\(stubs)")
    }
}
