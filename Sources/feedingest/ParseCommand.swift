import ExpatXML
import Fetch
import Foundation
import Syndication

/// `feedingest parse FILE... [--report FILE]`: articles of feed files as NDJSON, without a store.
enum ParseCommand {
    static let help = """
        Usage: feedingest parse [options] FILE...

        Parses RSS and Atom files and prints one JSON object per article on stdout, in document order,
        as soon as each article is parsed. Use - to read a feed from stdin. Files ending in .gz are
        inflated as they stream.

        Options:
          --report FILE   write a JSON report describing each input: format, version, encoding,
                          feed metadata, repairs made, and the error (with line and column), if any
          --charset NAME  decode inputs that do not say otherwise as NAME (like an HTTP charset)
          -q, --quiet     do not print errors on stderr (the exit status still tells)
          -h, --help      show this help

        Exit status: 0 when every input parsed cleanly (repairs included), 1 when an input could not be
        read or had an unrecoverable error (the articles before it are still printed), 2 for usage errors.

        Examples:
          feedingest parse feed.xml | jq -r .title
          curl -s https://example.org/feed.xml | feedingest parse - --report report.json
        """

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: Arguments
        do {
            parsed = try Arguments(arguments, spec: .init(flags: ["--quiet", "-q", "--help", "-h"], options: ["--report", "--charset"]),
                                   command: "parse")
        } catch {
            return Command.usageError(error)
        }
        if parsed.flags.contains("--help") || parsed.flags.contains("-h") {
            StandardStreams.output.write(help + "\n")
            StandardStreams.output.flush()
            return 0
        }
        guard !parsed.positional.isEmpty else {
            return Command.usageError(.init(message: "parse needs at least one FILE (or - for stdin)", hint: "see 'feedingest parse --help'"))
        }
        let quiet = parsed.flags.contains("--quiet") || parsed.flags.contains("-q")
        var configuration = FeedParserConfiguration()
        configuration.xml.charsetHint = parsed.options["--charset"]

        var summaries: [FeedSummary] = []
        var failed = false
        for input in parsed.positional {
            let summary = parse(input, configuration: configuration)
            if let error = summary.error {
                failed = true
                if !quiet { StandardStreams.error.write("feedingest: \(error.line > 0 ? "\(input):\(error.line):\(error.column)" : input): \(error.message)\n") }
            }
            summaries.append(summary)
        }
        StandardStreams.output.flush()

        if let reportPath = parsed.options["--report"] {
            var json = JSONWriter()
            json.beginObject()
            json.field("generator", "feedingest \(Command.version)")
            json.key("inputs")
            json.beginArray()
            for summary in summaries { summary.write(to: &json) }
            json.endArray()
            json.endObject()
            json.raw(0x0A)
            do {
                try Data(json.bytes).write(to: URL(fileURLWithPath: reportPath))
            } catch {
                StandardStreams.error.write("feedingest: cannot write the report to \(reportPath): \(error.localizedDescription)\n")
                return 2
            }
        }
        return failed ? 1 : 0
    }

    /// Streams one input through a FeedParser, printing each article as it completes.
    static func parse(_ input: String, configuration: FeedParserConfiguration) -> FeedSummary {
        var json = JSONWriter()
        let parser = FeedParser(source: input, configuration: configuration) { article, _ in
            json.reset()
            article.write(to: &json)
            json.raw(0x0A)
            StandardStreams.output.write(json.bytes)
        }
        let reader: ChunkReader
        if input == "-" {
            reader = ChunkReader(standardInputWithChunkSize: 64 * 1024)
        } else {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory), isDirectory.boolValue {
                return failedSummary(parser, input, "is a directory, not a feed file")
            }
            guard let opened = ChunkReader(path: input) else { return failedSummary(parser, input, ChunkReader.lastOpenError()) }
            reader = opened
        }
        // A .gz file (or gzip bytes on stdin) is inflated as it streams, the same Inflater HTTP bodies use.
        let inflater: Inflater? = input.hasSuffix(".gz") ? Inflater(format: .gzip) : nil
        do {
            while true {
                let chunk = try reader.next()
                if chunk.isEmpty { break }
                var failure: FeedError?
                chunk.withUnsafeBytes { bytes in
                    guard let inflater else {
                        do throws(FeedError) { try parser.parse(bytes) } catch { failure = error }
                        return
                    }
                    do throws(InflateError) {
                        try inflater.inflate(bytes) { inflated in
                            do throws(FeedError) { try parser.parse(inflated) } catch { failure = error }
                            return failure == nil
                        }
                    } catch {
                        failure = FeedError(kind: .xml(.readFailed), message: "gzip: \(error.message)", line: 0, column: 0,
                                            byteOffset: -1, source: input)
                    }
                }
                if let failure { throw failure }
                StandardStreams.output.flush()  // articles of this chunk go out now, not at the end
            }
            if let inflater {
                do throws(InflateError) { try inflater.finish() } catch {
                    throw FeedError(kind: .xml(.readFailed), message: "gzip: \(error.message)", line: 0, column: 0, byteOffset: -1, source: input)
                }
            }
            try parser.finish()
        } catch let error as FeedError {
            var summary = parser.summary
            if summary.error == nil { summary.error = error }  // an inflate error; the parser's own is already there
            StandardStreams.output.flush()
            return summary
        } catch {
            return failedSummary(parser, input, "read failed: \((error as? ChunkReader.ReadError)?.message ?? "\(error)")")
        }
        StandardStreams.output.flush()
        return parser.summary
    }

    private static func failedSummary(_ parser: FeedParser, _ input: String, _ message: String) -> FeedSummary {
        var summary = parser.summary
        summary.error = FeedError(kind: .xml(.readFailed), message: message, line: 0, column: 0, byteOffset: -1, source: input)
        return summary
    }
}
