import Fetch
import Foundation
import TestSupport
import Testing

@Suite("Inflater")
struct InflaterTests {
    static let original = FeedFixture.rss(items: 200)

    /// Inflates `compressed` fed in pieces of `piece` bytes; returns the output, or throws the InflateError.
    static func inflate(_ compressed: Data, format: Inflater.Format, piece: Int = 4096,
                        limits: Inflater.Limits = Inflater.Limits()) throws(InflateError) -> Data {
        let inflater = Inflater(format: format, limits: limits, outputChunkSize: 4096)
        var output = Data()
        var offset = 0
        while offset < compressed.count {
            let end = min(compressed.count, offset + piece)
            let slice = compressed[offset..<end]
            try feed(inflater, Data(slice)) { chunk in
                output.append(contentsOf: chunk)
                return true
            }
            offset = end
        }
        try inflater.finish()
        return output
    }

    /// Feeds all of `data` at once; the inflater's result, or its error.
    @discardableResult
    static func feed(_ inflater: Inflater, _ data: Data, _ body: (UnsafeRawBufferPointer) -> Bool = { _ in true }) throws(InflateError) -> Bool {
        var outcome: Result<Bool, InflateError> = .success(true)
        data.withUnsafeBytes { bytes in
            do throws(InflateError) { outcome = .success(try inflater.inflate(bytes, into: body)) } catch { outcome = .failure(error) }
        }
        return try outcome.get()
    }

    @Test(arguments: [Inflater.Format.gzip, .automatic])
    func gzipRoundTripAnySplit(format: Inflater.Format) throws {
        let compressed = Compress.gzip(Self.original)
        for piece in [1, 2, 3, 17, 1000, 65536, compressed.count] {
            #expect(try Self.inflate(compressed, format: format, piece: piece) == Self.original, "piece \(piece)")
        }
    }

    @Test func zlibAndRawDeflate() throws {
        let zlib = Compress.zlib(Self.original)
        let raw = Compress.raw(Self.original)
        #expect(try Self.inflate(zlib, format: .zlib) == Self.original)
        #expect(try Self.inflate(raw, format: .rawDeflate) == Self.original)
        // HTTP's "deflate" is zlib-wrapped by the standard and raw in practice: both are recognised.
        #expect(try Self.inflate(zlib, format: .httpDeflate, piece: 1) == Self.original)
        #expect(try Self.inflate(raw, format: .httpDeflate, piece: 1) == Self.original)
        #expect(try Self.inflate(zlib, format: .automatic) == Self.original)
        #expect(try Self.inflate(raw, format: .automatic) == Self.original)
    }

    @Test func detectedFormatIsReported() throws {
        let inflater = Inflater(format: .automatic)
        try Self.feed(inflater, Compress.zlib(Data("<a/>".utf8)))
        #expect(inflater.detectedFormat == .zlib)
        #expect(inflater.isComplete)
    }

    @Test func concatenatedGzipMembersAreOneStream() throws {
        let first = Self.original.prefix(10_000), second = Self.original.dropFirst(10_000)
        let compressed = Compress.gzip(Data(first)) + Compress.gzip(Data(second)) + Compress.gzip(Data())
        for piece in [1, 5, 4096] {
            #expect(try Self.inflate(compressed, format: .gzip, piece: piece) == Self.original)
        }
    }

    @Test func zeroPaddingAfterTheLastMemberIsIgnored() throws {
        let compressed = Compress.gzip(Self.original) + Data(repeating: 0, count: 100)
        #expect(try Self.inflate(compressed, format: .gzip, piece: 7) == Self.original)
    }

    @Test func trailingGarbageIsAnError() {
        let compressed = Compress.gzip(Self.original) + Data("garbage".utf8)
        #expect { try Self.inflate(compressed, format: .gzip) } throws: { ($0 as? InflateError)?.kind == .trailingData }
    }

    @Test func truncatedStreamIsTruncated() {
        let compressed = Compress.gzip(Self.original)
        for cut in [1, 5, 10, compressed.count / 2, compressed.count - 1] {
            #expect("cut at \(cut)") { try Self.inflate(compressed.prefix(cut), format: .gzip) } throws: {
                ($0 as? InflateError)?.kind == .truncated
            }
        }
        #expect { try Self.inflate(Data(), format: .automatic) } throws: { ($0 as? InflateError)?.kind == .truncated }
    }

    @Test func corruptDataIsCorruptWithZlibCode() throws {
        var compressed = Compress.gzip(Self.original)
        let middle = compressed.count / 2
        for i in middle..<(middle + 32) { compressed[i] ^= 0x5A }
        let error = try #require(throws: InflateError.self) { try Self.inflate(compressed, format: .gzip) }
        #expect(error.kind == .corrupt)
        #expect(error.zlibCode == .dataError)
        #expect(error.inputOffset > 0)
    }

    @Test func plainBytesAreNotGzip() throws {
        let error = try #require(throws: InflateError.self) { try Self.inflate(Self.original, format: .gzip) }
        #expect(error.kind == .corrupt)
        #expect(error.message.contains("header"))
    }

    @Test func badChecksumIsCorrupt() {
        var compressed = Compress.gzip(Self.original)
        compressed[compressed.count - 6] ^= 0xFF  // inside the CRC-32 of the trailer
        #expect { try Self.inflate(compressed, format: .gzip) } throws: { ($0 as? InflateError)?.kind == .corrupt }
    }

    @Test func outputLimitStopsBeforeHandingOutMore() throws {
        let limits = Inflater.Limits(maximumOutputBytes: 50_000)
        let inflater = Inflater(format: .gzip, limits: limits, outputChunkSize: 4096)
        var delivered = 0
        let compressed = Compress.gzip(Self.original)
        let error = try #require(throws: InflateError.self) {
            try Self.feed(inflater, compressed) { chunk in delivered += chunk.count; return true }
        }
        #expect(error.kind == .outputLimitExceeded)
        #expect(delivered <= 50_000)
        // After an error, the inflater keeps failing the same way.
        #expect(throws: InflateError.self) { try inflater.finish() }
    }

    @Test func ratioLimitCatchesABomb() throws {
        let bomb = Compress.gzip(Data(repeating: 0x20, count: 64 << 20))
        #expect(bomb.count < 100_000)
        let limits = Inflater.Limits(maximumRatio: 100, ratioActivationBytes: 1 << 20)
        let error = try #require(throws: InflateError.self) { try Self.inflate(bomb, format: .gzip, piece: 16384, limits: limits) }
        #expect(error.kind == .ratioLimitExceeded)
        #expect(error.outputOffset < 4 << 20)
    }

    @Test func smallCompressibleBodiesPassTheRatioCheck() throws {
        // 500 KB of one byte compresses about 1,000 times, but stays under the activation size.
        let data = Data(repeating: 0x41, count: 500_000)
        let limits = Inflater.Limits(maximumRatio: 100, ratioActivationBytes: 1 << 20)
        #expect(try Self.inflate(Compress.gzip(data), format: .gzip, limits: limits) == data)
    }

    @Test func stoppingFromTheBodyStops() throws {
        let inflater = Inflater(format: .gzip, outputChunkSize: 1024)
        var chunks = 0
        let proceeded = try Self.feed(inflater, Compress.gzip(Self.original)) { _ in chunks += 1; return chunks < 3 }
        #expect(!proceeded)
        #expect(chunks == 3)
    }

    @Test func gzipFileIsReadThroughFetch() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("inflater-\(UUID().uuidString).xml.gz")
        let compressed = Compress.gzip(Self.original.prefix(30_000)) + Compress.gzip(Self.original.dropFirst(30_000))
        try compressed.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let consumer = CollectingConsumer()
        let result = Fetcher.shared.fetch(.localFile(file.path), into: consumer)
        #expect(result.isOK)
        #expect(result.contentEncoding == "gzip")
        #expect(consumer.data == Self.original)
        #expect(result.bodySHA256 == SHA256.hash(compressed))  // the file's bytes, as read
    }

    @Test func damagedGzipFileIsADecompressionErrorNotTheParsersComplaint() throws {
        // An RSS document whose gzip stream is damaged in the middle: the damage decodes to bytes the XML parser refuses
        // before zlib finds it, and the failure is the damage all the same.
        var feed = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>t</title>"
        for index in 0..<400 { feed += "<item><title>Item \(index)</title><guid>g\(index)</guid><description>\(String(repeating: "words and more words ", count: 6))</description></item>" }
        feed += "</channel></rss>"
        var compressed = [UInt8](Compress.gzip(Data(feed.utf8)))
        for index in compressed.count / 2..<(compressed.count / 2 + 64) { compressed[index] ^= 0x5A }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("inflater-\(UUID().uuidString).xml.gz")
        try Data(compressed).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let consumer = CountingConsumer()
        let result = Fetcher.shared.fetch(.localFile(file.path), into: consumer)
        let error = try #require(result.error)
        #expect(error.kind == .decompression, "\(error)")
        #expect(error.underlying is InflateError)
        #expect(consumer.items > 0 && consumer.items < 400)
        #expect(!consumer.finished)
    }
}

/// zlib's results checked for real: `finish()` ends zlib's stream with `inflateEnd`, and a gzip member given after it
/// makes zlib itself refuse `inflateReset` on the ended stream (`Z_STREAM_ERROR`), which comes back as a typed
/// ``InflateError`` naming the call and zlib's code instead of a silent restart or a crash.
@Suite("Inflater: checked zlib results")
struct InflaterCheckedResultTests {
    @Test func aMemberAfterFinishIsZlibsStreamError() throws {
        let member = Compress.gzip(Data("<rss/>".utf8))
        let inflater = Inflater(format: .gzip)
        var output = Data()
        try InflaterTests.feed(inflater, member) { output.append(contentsOf: $0); return true }
        try inflater.finish()
        #expect(output == Data("<rss/>".utf8))
        #expect(inflater.isComplete)
        do {
            try InflaterTests.feed(inflater, member)
            Issue.record("a member after finish() was inflated")
        } catch {
            #expect(error.kind == .streamError)
            #expect(error.zlibCode == ZlibCode(rawValue: -2))  // Z_STREAM_ERROR
            #expect(error.message.contains("inflateReset"))
        }
        // Every later call repeats the error.
        #expect(throws: InflateError.self) { try inflater.finish() }
    }

    @Test func finishTwiceIsFine() throws {
        let inflater = Inflater(format: .automatic)
        try InflaterTests.feed(inflater, Compress.zlib(Data("x".utf8)))
        try inflater.finish()
        try inflater.finish()
    }
}

/// Inputs the `inflate` fuzz harness found (Fuzz/FeedingestFuzz), minimised.
@Suite("Inflater: fuzz regressions")
struct InflaterFuzzRegressionTests {
    /// A member, zero padding, then another gzip member: trailing data whatever the split. It used to be trailing data
    /// when the padding and the member came in one chunk, and a second member when a chunk ended inside the padding.
    @Test func aMemberAfterZeroPaddingIsTrailingDataWhateverTheSplit() throws {
        let member = Compress.gzip(Data("<rss/>".utf8))
        let input = member + Data([0, 0, 0]) + member
        var outcomes: Set<String> = []
        for cut in 0...input.count {
            let inflater = Inflater(format: .automatic)
            var output = Data()
            do {
                try InflaterTests.feed(inflater, input.prefix(cut)) { output.append(contentsOf: $0); return true }
                try InflaterTests.feed(inflater, input.dropFirst(cut)) { output.append(contentsOf: $0); return true }
                try inflater.finish()
                outcomes.insert("ok \(output.count)")
            } catch {
                outcomes.insert("\(error.kind) at \(error.inputOffset), \(output.count) bytes out")
            }
        }
        #expect(outcomes == ["trailingData at \(member.count + 3), 6 bytes out"])
    }

    /// Padding alone after the last member is still fine, in any split.
    @Test func zeroPaddingAloneIsFine() throws {
        let input = Compress.gzip(Data("<rss/>".utf8)) + Data(repeating: 0, count: 5)
        for cut in 0...input.count {
            let inflater = Inflater(format: .gzip)
            try InflaterTests.feed(inflater, input.prefix(cut))
            try InflaterTests.feed(inflater, input.dropFirst(cut))
            try inflater.finish()
        }
    }
}
