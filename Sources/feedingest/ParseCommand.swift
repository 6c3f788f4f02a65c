import ExpatXML
import Fetch
import Foundation
import Syndication

/// `feedingest parse FILE... [--report FILE]`: articles of feed files as NDJSON, without a store.
enum ParseCommand {
    static let help = """
        Usage: feedingest parse [options] FILE|URL...

        Parses RSS and Atom feeds and prints one JSON object per article on stdout, in document order,
        as soon as each article is parsed. FILE may be a path, - for stdin, or an http(s) URL, which is
        fetched and parsed as it downloads. Files ending in .gz (and gzip-encoded responses) are
        inflated as they stream.

        Options:
          --report FILE   write a JSON report describing each input: format, version, encoding,
                          feed metadata, repairs made, and the error (with line and column), if any
          --charset NAME  decode inputs that do not say otherwise as NAME (like an HTTP charset)
          -q, --quiet     do not print errors on stderr (the exit status still tells)
          -h, --help      show this help

        Exit status: 0 when every input parsed cleanly (repairs included), 1 when an input could not be
        read or had an unrecoverable error (the articles before it are still printed) or output could not
        be written, 2 for usage errors.

        Examples:
          feedingest parse feed.xml | jq -r .title
          curl -s https://example.org/feed.xml | feedingest parse - --report report.json
        """

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: Arguments
        switch Command.invocation(arguments, flags: ["--quiet", "-q"], options: ["--report", "--charset"], command: "parse", help: help) {
        case .exit(let status): return status
        case .run(let arguments): parsed = arguments
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
        fetcher?.shutdown()  // its transfer thread ends (joined) now, not in a race with the process's exit
        fetcher = nil
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
                return 1
            }
        }
        return failed ? 1 : 0
    }

    /// Streams one input through a FeedParser, printing each article as it completes.
    static func parse(_ input: String, configuration: FeedParserConfiguration) -> FeedSummary {
        let lowered = input.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") { return parseURL(input, configuration: configuration) }
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
        // A .gz file, or gzip bytes on stdin (told by their magic number), is inflated as it streams,
        // with the same Inflater HTTP bodies use.
        var inflater: Inflater? = input.hasSuffix(".gz") ? Inflater(format: .gzip) : nil
        var first = true
        do {
            while true {
                let chunk = try reader.next()
                if chunk.isEmpty { break }
                if first {
                    first = false
                    if input == "-", chunk.count >= 2, chunk[chunk.startIndex] == 0x1F, chunk[chunk.startIndex + 1] == 0x8B {
                        inflater = Inflater(format: .gzip)
                    }
                }
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

    /// The one fetcher of this process, made on first use (only `parse URL` needs it).
    nonisolated(unsafe) private static var fetcher: Fetcher?  // the command runs on one thread

    /// Fetches a feed with libcurl and parses its body as it arrives (inflating gzip on the fly), printing
    /// each article as it completes. The Content-Type charset is the parser's hint; the final URL after
    /// redirects is the base for relative links.
    static func parseURL(_ input: String, configuration: FeedParserConfiguration) -> FeedSummary {
        let placeholder = FeedParser(source: input, configuration: configuration) { _, _ in }
        guard let url = URL(string: input), url.host != nil else { return failedSummary(placeholder, input, "not a valid URL") }
        if fetcher == nil { fetcher = Fetcher() }
        let consumer = PrintingConsumer(source: input, configuration: configuration)
        let result = fetcher!.fetch(FetchRequest(url: url), into: consumer)
        StandardStreams.output.flush()
        let parser = consumer.parser ?? placeholder
        var summary = parser.summary
        if summary.error == nil, let error = result.error {
            summary.error = FeedError(kind: .xml(.readFailed), message: error.description, line: 0, column: 0, byteOffset: -1, source: input)
        } else if summary.error == nil, case .notModified = result.outcome {
            summary.error = FeedError(kind: .xml(.readFailed), message: "not modified (HTTP 304) without validators", line: 0, column: 0,
                                      byteOffset: -1, source: input)
        }
        return summary
    }

    /// Feeds a fetched body into a FeedParser made when the response arrives (so its charset can be the hint).
    final class PrintingConsumer: FetchConsumer {
        private let source: String
        private let configuration: FeedParserConfiguration
        private(set) var parser: FeedParser?
        private var json = JSONWriter()

        init(source: String, configuration: FeedParserConfiguration) {
            self.source = source
            self.configuration = configuration
        }

        func fetchDidReceiveResponse(_ response: FetchResponse) throws {
            var configuration = self.configuration
            if configuration.xml.charsetHint == nil { configuration.xml.charsetHint = response.charset }
            parser = FeedParser(source: source, baseURL: response.url.absoluteString, configuration: configuration) { [unowned self] article, _ in
                json.reset()
                article.write(to: &json)
                json.raw(0x0A)
                StandardStreams.output.write(json.bytes)
            }
        }

        func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws {
            try parser?.parse(bytes)
            StandardStreams.output.flush()  // articles go out as the body arrives
        }

        func fetchDidFinish() throws {
            try parser?.finish()
        }
    }

    private static func failedSummary(_ parser: FeedParser, _ input: String, _ message: String) -> FeedSummary {
        var summary = parser.summary
        summary.error = FeedError(kind: .xml(.readFailed), message: message, line: 0, column: 0, byteOffset: -1, source: input)
        return summary
    }
}
