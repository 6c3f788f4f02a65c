import ExpatXML
import Fetch
import Foundation
import TestSupport
import XMLFetching
import Testing

/// Against nginx from Debian: realistic serving with gzip, ETag/Last-Modified, keep-alive and HTTP/2 over TLS.
@Suite("nginx")
struct NginxTests {
    let nginx: NginxServer

    init() throws {
        nginx = try NginxServer.shared.get()
    }

    @Test func gzippedFeedStreamsIntoTheParser() throws {
        let fetcher = Fetcher()
        let consumer = CountingConsumer()
        let result = fetcher.fetch(FetchRequest(url: nginx.url("/feeds/medium.xml")), into: consumer)
        #expect(result.isOK, "\(String(describing: result.error))")
        #expect(result.contentEncoding == "gzip")
        #expect(result.response?.headers["Content-Encoding"] == "gzip")
        #expect(consumer.items == NginxServer.feeds["medium.xml"])
        let original = FeedFixture.rss(items: NginxServer.feeds["medium.xml"]!)
        #expect(result.decodedBytes == Int64(original.count))
        #expect(result.bodyBytes < result.decodedBytes / 3)
        #expect(consumer.decoded.finalize() == SHA256.hash(original))
        // The body hash is of the gzip bytes as received; nginx compresses the same way each time.
        let again = fetcher.fetch(FetchRequest(url: nginx.url("/feeds/medium.xml")), into: DiscardingConsumer())
        #expect(result.bodySHA256 != nil && again.bodySHA256 == result.bodySHA256)
    }

    @Test func conditionalGetGivesNotModified() throws {
        let fetcher = Fetcher()
        let url = nginx.url("/feeds/small.xml")
        let first = fetcher.fetch(FetchRequest(url: url), into: CountingConsumer())
        let response = try #require(first.response)
        let validators = response.validators
        #expect(validators.entityTag != nil)
        #expect(validators.lastModified != nil)
        // Both validators, then each one alone, still hold.
        for sent in [validators, FetchValidators(entityTag: validators.entityTag), FetchValidators(lastModified: validators.lastModified)] {
            let consumer = CountingConsumer()
            let again = fetcher.fetch(FetchRequest(url: url, validators: sent), into: consumer)
            #expect(again.isNotModified, "\(sent): \(String(describing: again.error))")
            #expect(consumer.response == nil)
            #expect(again.decodedBytes == 0)
        }
        // A stale tag gets the whole body again.
        let changed = fetcher.fetch(FetchRequest(url: url, validators: FetchValidators(entityTag: "\"stale\"")), into: CountingConsumer())
        #expect(changed.isOK)
    }

    @Test func keepAliveAcrossSeveralFeeds() throws {
        let fetcher = Fetcher()
        var connects = 0
        for name in ["small.xml", "medium.xml", "small.xml", "medium.xml"] {
            let result = fetcher.fetch(FetchRequest(url: nginx.url("/feeds/\(name)")), into: CountingConsumer())
            #expect(result.isOK)
            connects += result.newConnections
        }
        #expect(connects == 1)
    }

    @Test func notFoundIsAnHTTPError() throws {
        let result = Fetcher().fetch(FetchRequest(url: nginx.url("/feeds/missing.xml")), into: CountingConsumer())
        #expect(result.error?.kind == .httpStatus(404))
    }

    /// Every real-world XML feed of the corpus, fetched (gzip) and parsed as it streams: the decoded body hashes to
    /// the manifest's SHA-256 of the file, and the item count matches the manifest.
    @Test func realWorldCorpusOverHTTP() async throws {
        struct Entry: Decodable {
            let file: String
            let sha256: String
            let wellformed_expat: Bool?
            let item_count_expat: Int?
        }
        let base = "realworld/rsparser"
        let manifest = try JSONDecoder().decode([Entry].self, from: Data(contentsOf: Paths.corpus.appendingPathComponent("\(base)/manifest.json")))
        let entries = manifest.filter { $0.wellformed_expat != nil }
        #expect(entries.count >= 20)
        let fetcher = Fetcher()
        let nginx = self.nginx
        let outcomes = await withTaskGroup(of: (Entry, FetchResult, Int, SHA256Digest).self) { group in
            for entry in entries {
                group.addTask {
                    let path = "/corpus/\(base)/\(entry.file)".addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)!
                    let (result, items, decoded) = await fetchCounting(fetcher, nginx.url(path))
                    return (entry, result, items, decoded)
                }
            }
            var all: [(Entry, FetchResult, Int, SHA256Digest)] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        for (entry, result, items, decoded) in outcomes {
            #expect(result.response?.status == 200, "\(entry.file)")
            if entry.wellformed_expat == true {
                #expect(result.isOK, "\(entry.file): \(String(describing: result.error))")
                #expect(decoded.hex == entry.sha256, "\(entry.file)")
                if let expected = entry.item_count_expat { #expect(items == expected, "\(entry.file)") }
            } else {
                #expect(result.error?.kind == .consumerFailed, "\(entry.file)")
                #expect(result.error?.underlying is ExpatXMLError, "\(entry.file)")
            }
        }
    }

    @Test func expatParserURLEntryPoint() throws {
        final class Titles: ExpatXMLParserDelegate {
            var items = 0
            var encoding: DocumentEncoding?
            func parser(_ parser: ExpatXMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
                if elementName == "item" { items += 1 }
                encoding = parser.encoding
            }
        }
        let delegate = Titles()
        let result = try ExpatXMLParser.parse(contentsOf: nginx.url("/feeds/small.xml"), delegate: delegate)
        #expect(result.isOK)
        #expect(delegate.items == NginxServer.feeds["small.xml"])
        // A body that is not XML throws the parser's error, not a FetchError.
        let json = "/corpus/realworld/rsparser/Tests/RSParserTests/Resources/3960.json"
        #expect(throws: ExpatXMLError.self) { try ExpatXMLParser.parse(contentsOf: nginx.url(json), delegate: Titles()) }
        // Transport failures throw FetchError.
        #expect(throws: FetchError.self) { try ExpatXMLParser.parse(contentsOf: nginx.url("/feeds/none.xml"), delegate: Titles()) }
        // With validators, a 304 returns normally as not-modified.
        let again = try ExpatXMLParser.parse(contentsOf: nginx.url("/feeds/small.xml"), delegate: Titles(),
                                             validators: try #require(result.response).validators)
        #expect(again.isNotModified)
    }

    @Test func pushParserURLEntryPoint() throws {
        let counter = ItemCounter()
        let result = try XMLPushParser.parse(contentsOf: nginx.url("/feeds/small.xml"), handler: counter)
        #expect(result.isOK)
        #expect(counter.items == NginxServer.feeds["small.xml"])
    }

    // MARK: TLS and HTTP/2

    @Test(.enabled(if: NginxServer.openssl != nil, "openssl makes the test certificate"))
    func http2MultiplexesOverOneConnection() async throws {
        let url = try #require(nginx.tlsURL("/feeds/small.xml"))
        let fetcher = Fetcher(configuration: testConfiguration { $0.certificateAuthorityFile = nginx.certificate })
        let results = await withTaskGroup(of: FetchResult.self) { group in
            for _ in 0..<12 {
                group.addTask { await fetcher.fetch(FetchRequest(url: url), into: CountingConsumer()) }
            }
            var all: [FetchResult] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.allSatisfy { $0.isOK }, "\(results.compactMap(\.error))")
        #expect(results.allSatisfy { $0.response?.httpVersion == "2" })
        #expect(results.allSatisfy { $0.contentEncoding == "gzip" })
        #expect(fetcher.statistics.connectionsOpened == 1)
    }

    @Test(.enabled(if: NginxServer.openssl != nil, "openssl makes the test certificate"))
    func untrustedCertificateIsATLSFailure() throws {
        let url = try #require(nginx.tlsURL("/feeds/small.xml"))
        let result = Fetcher().fetch(FetchRequest(url: url), into: CountingConsumer())
        let error = try #require(result.error)
        #expect(error.kind == .tlsFailure, "\(error)")
        #expect(error.curlCode?.isTLSError == true)
    }

    @Test func tlsToAPlainHTTPPortIsATLSFailure() throws {
        let url = URL(string: "https://127.0.0.1:\(nginx.port)/feeds/small.xml")!
        let result = Fetcher().fetch(FetchRequest(url: url), into: CountingConsumer())
        let error = try #require(result.error)
        #expect(error.kind == .tlsFailure, "\(error)")
    }
}
