import Foundation
import TestSupport
import Testing

/// A C library that fails for real reaches the user as a clear error, not a crash and not silence.
@Suite("C library failures, end to end")
struct LibraryFailureCommandTests {
    /// An OpenSSL configuration that activates only the `null` provider (which implements no algorithm): libcrypto
    /// then has no SHA-256 and `EVP_DigestInit_ex` fails, while plain-HTTP transfers through libcurl still work.
    /// The commands hash no bodies (nothing reads the hash), so `parse URL` is not affected; the hashing path itself,
    /// and its failure as `FetchError.Kind.libraryFailure`, is tested in FetchTests (HeaderAndHashTests) with a real
    /// failing libcrypto context.
    @Test func parseOverHTTPNeedsNoSHA256() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let feed = """
            <?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
            <item><title>one</title><guid>1</guid></item></channel></rss>
            """
        try Data(feed.utf8).write(to: directory.appendingPathComponent("feed.xml"))
        let configuration = directory.appendingPathComponent("openssl-null.cnf")
        try Data("""
            openssl_conf = openssl_init
            [openssl_init]
            providers = provider_sect
            [provider_sect]
            null = null_sect
            [null_sect]
            activate = 1

            """.utf8).write(to: configuration)
        let server = try FeedServer(root: directory)
        let url = "http://127.0.0.1:\(server.port)/feed.xml"

        let working = try CommandRunner.run(["parse", url])
        #expect(working.status == 0 && working.lines.count == 1, "\(working.stderr)")

        var environment = ProcessInfo.processInfo.environment
        environment["OPENSSL_CONF"] = configuration.path
        let withoutSHA256 = try CommandRunner.run(["parse", url], environment: environment)
        #expect(withoutSHA256.status == 0, "\(withoutSHA256.stderr)")
        #expect(withoutSHA256.lines == working.lines, "the same article, with no hash computed")
        // The configuration really takes libcrypto's SHA-256 away: openssl(1), reading the same file, cannot digest.
        let openssl = try ChildProcess.run("/usr/bin/openssl", ["dgst", "-sha256", configuration.path], environment: environment)
        #expect(openssl.status != 0, "\(openssl.standardOutput)")
    }
}
