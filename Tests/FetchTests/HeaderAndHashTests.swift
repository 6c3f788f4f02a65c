@testable import Fetch
import Foundation
import TestSupport
import Testing

@Suite("SHA-256 (NIST vectors)")
struct SHA256Tests {
    // FIPS 180-4 examples (NIST CSRC "Example Algorithms") and the classic long-message vectors.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ])
    func nistVector(message: String, digest: String) {
        #expect(SHA256.hash(Array(message.utf8)).hex == digest)
    }

    @Test func oneMillionAs() {
        var hash = SHA256()
        let block = [UInt8](repeating: 0x61, count: 1000)
        for _ in 0..<1000 { hash.update(block) }
        #expect(hash.finalize().hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func anySplitGivesTheSameDigest() {
        let message = Array(FeedFixture.rss(items: 3))
        let whole = SHA256.hash(message)
        for piece in [1, 3, 55, 56, 63, 64, 65, 127, 1000] {
            var hash = SHA256()
            var offset = 0
            while offset < message.count {
                let end = min(message.count, offset + piece)
                hash.update(Array(message[offset..<end]))
                offset = end
            }
            #expect(hash.finalize() == whole, "piece \(piece)")
        }
        // Boundary lengths around the padding block.
        #expect(SHA256.hash(Array(repeating: UInt8(0x61), count: 55)).hex == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        #expect(SHA256.hash(Array(repeating: UInt8(0x61), count: 64)).hex == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
    }

    @Test func aCopyHashesOnIndependentlyAndFinalizeLeavesTheHashUsable() throws {
        var abc = SHA256()
        abc.update(Array("ab".utf8))
        var copy = abc  // shares libcrypto's context until one of them changes
        abc.update(Array("c".utf8))
        #expect(abc.finalize().hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(try abc.digest() == abc.finalize(), "finalizing twice gives the same digest")
        copy.update(Array("x".utf8))
        #expect(copy.finalize() == SHA256.hash(Array("abx".utf8)))
        abc.update(Array("dbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))  // more after a finalize
        #expect(abc.finalize().hex == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(abc.error == nil && copy.error == nil)
    }

    @Test func aFileHashesInChunksLikeItsBytes() throws {
        let message = Array(FeedFixture.rss(items: 40))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sha256-\(UUID().uuidString).xml").path
        try Data(message).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        for chunkSize in [1, 63, 64, 4096, 1 << 20] {
            #expect(try SHA256.hash(contentsOfFile: path, chunkSize: chunkSize) == SHA256.hash(message), "chunk \(chunkSize)")
        }
        // A partial file first, then the bytes that follow it: a resumed download.
        var resumed = SHA256()
        #expect(try resumed.update(contentsOfFile: path) == Int64(message.count))
        resumed.update(Array("tail".utf8))
        #expect(resumed.finalize() == SHA256.hash(message + Array("tail".utf8)))
    }

    @Test func anUnreadableFileIsAHashErrorWithItsErrno() throws {
        let missing = "/nonexistent-\(UUID().uuidString)/feed.xml"
        let error = try #require(throws: HashError.self) { try SHA256.hash(contentsOfFile: missing) }
        #expect(error.kind == .fileUnreadable && error.systemError == ENOENT && error.context == missing)
        #expect(error.message.contains("No such file or directory"))
        // A directory opens but does not read.
        let directory = try #require(throws: HashError.self) { try SHA256.hash(contentsOfFile: NSTemporaryDirectory()) }
        #expect(directory.kind == .fileUnreadable && directory.systemError == EISDIR)
    }

    @Test func aLibcryptoFailureIsKeptAndThrownWithItsCode() throws {
        // A context given no digest: EVP_DigestInit_ex really fails, as it does when OpenSSL offers no SHA-256.
        var hash = SHA256(context: { () throws(HashError) in try DigestContext(digest: nil) })
        let error = try #require(hash.error)
        #expect(error.kind == .libcrypto && error.context == "EVP_DigestInit_ex")
        #expect(error.libcryptoCode.reasonText == "no digest set")
        #expect(error.libcryptoCode.library == 6)  // ERR_LIB_EVP
        #expect(error.description.contains("digital envelope routines"))
        hash.update(Array("ignored".utf8))
        #expect(hash.error == error)
        #expect(throws: error) { try hash.digest() }
        #expect(throws: error) { try hash.update(contentsOfFile: "/dev/null") }
    }
}

@Suite("Response headers")
struct ResponseHeaderTests {
    static func response(_ fields: [(String, String)], url: String = "https://example.com/feeds/main.xml") -> FetchResponse {
        FetchResponse(status: 200, headers: HTTPHeaders(fields.map { (name: $0.0, value: $0.1) }), url: URL(string: url)!)
    }

    @Test func charsetAndEncodings() {
        let r = Self.response([("content-type", "application/rss+xml; Charset=\"ISO-8859-1\""), ("Content-Encoding", "gzip")])
        #expect(r.mediaType == "application/rss+xml")
        #expect(r.charset == "ISO-8859-1")
        #expect(r.contentEncodings == ["gzip"])
        #expect(Self.response([("Content-Type", "text/xml")]).charset == nil)
        #expect(Self.response([("Content-Encoding", "identity")]).contentEncodings.isEmpty)
    }

    @Test func cacheHeaders() throws {
        let r = Self.response([("Cache-Control", "public, max-age=300, must-revalidate"), ("Expires", "Sun, 06 Nov 1994 08:49:37 GMT"),
                               ("ETag", "W/\"abc\""), ("Last-Modified", "Sunday, 06-Nov-94 08:49:37 GMT")])
        #expect(r.maxAge == 300)
        #expect(r.expires == Date(timeIntervalSince1970: 784_111_777))
        #expect(r.lastModifiedDate == Date(timeIntervalSince1970: 784_111_777))
        #expect(r.validators == FetchValidators(entityTag: "W/\"abc\"", lastModified: "Sunday, 06-Nov-94 08:49:37 GMT"))
        #expect(Self.response([("Expires", "0")]).expires == nil)
    }

    @Test func httpDateForms() {
        let expected = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(HTTPDate.parse("yesterday") == nil)
        #expect(HTTPDate.format(expected) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test func retryAfter() {
        #expect(RetryAfter("120") == .seconds(120))
        #expect(RetryAfter(" 0 ") == .seconds(0))
        #expect(RetryAfter("Sun, 06 Nov 1994 08:49:37 GMT") == .date(Date(timeIntervalSince1970: 784_111_777)))
        #expect(RetryAfter("-5") == nil)
        #expect(RetryAfter("soon") == nil)
        let inAnHour = RetryAfter.date(Date().addingTimeInterval(3600))
        #expect(inAnHour.delay() > 3500)
        #expect(RetryAfter.date(Date(timeIntervalSince1970: 0)).delay() == 0)
    }

    @Test func linkHeaders() {
        let r = Self.response([
            ("Link", "<https://pubsubhubbub.appspot.com/>; rel=\"hub\", </feeds/main.xml>; rel=\"self\""),
            ("link", "<https://hub2.example.org/>; rel=hub; title=\"a, b\", <https://x.example/>; rel=\"alternate HUB\""),
        ])
        #expect(r.hubLinks.map(\.absoluteString) == ["https://pubsubhubbub.appspot.com/", "https://hub2.example.org/", "https://x.example/"])
        #expect(r.selfLink?.absoluteString == "https://example.com/feeds/main.xml")
        #expect(Self.response([]).hubLinks.isEmpty)
    }

    @Test func configurationDefaults() {
        let c = FetchConfiguration()
        #expect(c.maximumConcurrentTransfers >= 32)
        #expect(c.connectTimeout == .seconds(10))
        #expect(c.totalTimeout == .seconds(60))
        #expect(c.maximumRedirects == 5)
        #expect(c.userAgent.hasPrefix("feedingest/\(FetchConfiguration.version) (+http"))
    }
}
