import Fetch
import Foundation
import TestSupport
import Testing

/// The gzip framing the Inflater checks itself (zlib parses each header; the inflater checks each member's CRC-32 and
/// ISIZE with libdeflate's CRC), against members made by Python's zlib and gzip modules and by gzip(1).
@Suite("Inflater: gzip framing")
struct GzipFramingTests {
    /// Small enough to try every split of a member or two.
    static let original = Data(FeedFixture.rss(items: 6))

    /// Runs `python3 -c script` with `input` on stdin; its stdout.
    static func python(_ script: String, _ input: Data) throws -> Data {
        let run = try ChildProcess.run("/usr/bin/env", ["python3", "-c", script], standardInput: input)
        #expect(run.status == 0, "\(run.standardError)")
        return run.output
    }

    /// One member with every optional header field: FEXTRA, FNAME, FCOMMENT and FHCRC (RFC 1952), made by Python.
    static let allFlagsScript = """
        import struct, sys, zlib
        data = sys.stdin.buffer.read()
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        body = c.compress(data) + c.flush()
        header = b'\\x1f\\x8b\\x08' + bytes([2 | 4 | 8 | 16]) + struct.pack('<I', 1700000000) + b'\\x00\\x03'
        extra = b'AB' + struct.pack('<H', 4) + b'wxyz'
        header += struct.pack('<H', len(extra)) + extra + b'feed.xml\\x00' + b'a comment\\x00'
        header += struct.pack('<H', zlib.crc32(header) & 0xFFFF)
        sys.stdout.buffer.write(header + body + struct.pack('<II', zlib.crc32(data), len(data) & 0xFFFFFFFF))
        """

    /// Inflates `input` cut in two at `cut`: the output, and "ok" or the error's kind, message and offset.
    static func outcome(_ input: Data, cut: Int, format: Inflater.Format = .gzip) -> (output: Data, outcome: String) {
        let inflater = Inflater(format: format, outputChunkSize: 1024)
        var output = Data()
        do {
            try InflaterTests.feed(inflater, input.prefix(cut)) { output.append(contentsOf: $0); return true }
            try InflaterTests.feed(inflater, input.dropFirst(cut)) { output.append(contentsOf: $0); return true }
            try inflater.finish()
            return (output, "ok")
        } catch {
            return (output, "\(error.kind) \(error.message) at \(error.inputOffset)")
        }
    }

    @Test func everyHeaderFieldAnySplit() throws {
        let member = try Self.python(Self.allFlagsScript, Self.original)
        // gzip(1) reads the same bytes back (it checks the header CRC too): the member is well formed.
        #expect(try ChildProcess.run("/bin/gzip", ["-dc"], standardInput: member).output == Self.original)
        for cut in 0...member.count {
            let result = Self.outcome(member, cut: cut)
            #expect(result.outcome == "ok" && result.output == Self.original, "cut at \(cut): \(result.outcome)")
        }
        #expect(try InflaterTests.inflate(member, format: .automatic, piece: 1) == Self.original)
    }

    @Test func aWrongHeaderCRCIsCorrupt() throws {
        var member = try Self.python(Self.allFlagsScript, Self.original)
        let headerCRC = 10 + 2 + 8 + "feed.xml".utf8.count + 1 + "a comment".utf8.count + 1
        member[headerCRC] ^= 0x01
        for cut in [0, 5, headerCRC, headerCRC + 1, member.count] {
            let result = Self.outcome(member, cut: cut)
            #expect(result.output.isEmpty)
            #expect(result.outcome.hasPrefix("corrupt header crc mismatch"), "cut at \(cut): \(result.outcome)")
        }
    }

    @Test func pythonMembersConcatenatedAnySplit() throws {
        let first = Self.original.prefix(1000), second = Self.original.dropFirst(1000)
        let script = "import gzip, sys; d = sys.stdin.buffer.read(); sys.stdout.buffer.write(gzip.compress(d[:1000], mtime=0) + gzip.compress(d[1000:], mtime=0) + gzip.compress(b''))"
        let members = try Self.python(script, Self.original)
        #expect(Data(first) + Data(second) == Self.original)
        for cut in 0...members.count {
            let result = Self.outcome(members, cut: cut)
            #expect(result.outcome == "ok" && result.output == Self.original, "cut at \(cut): \(result.outcome)")
        }
    }

    @Test func gzipToolOutputInflates() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gzip-framing-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("feed.xml")
        let big = Data(FeedFixture.rss(items: 300))
        try big.write(to: file)
        // gzip(1) writes the file's name (FNAME) and its time; -9 and -1 make different block layouts.
        for level in ["-1", "-9"] {
            let compressed = try ChildProcess.run("/bin/gzip", ["-c", level, file.path]).output
            #expect(compressed.count > 10 && compressed[3] & 8 != 0, "FNAME set")
            for piece in [1, 4096, compressed.count] {
                #expect(try InflaterTests.inflate(compressed, format: .gzip, piece: piece) == big, "\(level) piece \(piece)")
            }
        }
    }

    /// A wrong CRC-32 or ISIZE in the trailer is corrupt with zlib's message, after the whole member's output was
    /// handed out, and the same whatever the split; in the first of two members too.
    @Test(arguments: [(8, "incorrect data check"), (4, "incorrect length check")])
    func aWrongTrailerIsCorruptAnySplit(fromEnd: Int, message: String) throws {
        var member = Compress.gzip(Self.original)
        member[member.count - fromEnd] ^= 0x10
        for input in [member, member + Compress.gzip(Self.original)] {
            var outcomes: Set<String> = []
            for cut in 0...input.count {
                let result = Self.outcome(input, cut: cut)
                #expect(result.output == Self.original, "cut at \(cut)")
                outcomes.insert(result.outcome)
            }
            #expect(outcomes == ["corrupt \(message) at \(member.count)"])
        }
        let error = try #require(throws: InflateError.self) { try InflaterTests.inflate(member, format: .gzip) }
        #expect(error.zlibCode == .dataError)
    }

    @Test func aTruncatedTrailerIsTruncated() throws {
        let member = Compress.gzip(Self.original)
        for missing in 1...8 {
            let input = member.dropLast(missing)
            for cut in [0, input.count / 2, input.count - 1, input.count] {
                let result = Self.outcome(Data(input), cut: cut)
                #expect(result.output == Self.original, "missing \(missing), cut at \(cut)")
                #expect(result.outcome.hasPrefix("truncated"), "missing \(missing), cut at \(cut): \(result.outcome)")
            }
        }
    }

    /// zlib-wrapped and raw deflate are untouched by the gzip framing: zlib checks the Adler-32 as before.
    @Test func zlibAdlerIsStillChecked() throws {
        var zlib = Compress.zlib(Self.original)
        zlib[zlib.count - 1] ^= 0x01
        let error = try #require(throws: InflateError.self) { try InflaterTests.inflate(zlib, format: .automatic) }
        #expect(error.kind == .corrupt && error.message == "incorrect data check")
        #expect(try InflaterTests.inflate(Compress.raw(Self.original), format: .automatic, piece: 3) == Self.original)
    }
}
