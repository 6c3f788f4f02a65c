import Foundation
import TestSupport

extension NginxServer {
    /// The Fetch tests' nginx, one per test process: generated feeds at `/feeds/` (``feeds``), the shared corpora at
    /// `/corpus/`, and the same files rate-limited at `/slow/` (256 KiB/s), uncompressed at `/plain/` and as their
    /// precompressed `.gz` copies at `/static/`; gzip, ETag/Last-Modified and keep-alive, and TLS with HTTP/2 when
    /// openssl can make a certificate.
    static let shared: Result<NginxServer, TestSupportError> = {
        var configuration = NginxServer.Configuration(tls: true)
        for (name, items) in feeds { configuration.files["feeds/\(name)"] = FeedFixture.rss(items: items) }
        configuration.locations = [
            .init("/corpus/", alias: Paths.corpus.path),
            .init("/slow/", limitRate: 256 << 10),
            .init("/plain/", gzip: false),
            .init("/static/", gzip: false, gzipStatic: true),
        ]
        do { return .success(try NginxServer(configuration)) } catch {
            return .failure(TestSupportError("nginx did not start: \(error)"))
        }
    }()

    /// The generated feeds at `/feeds/`: name → item count.
    static let feeds: [String: Int] = ["small.xml": 20, "medium.xml": 1500]
}
