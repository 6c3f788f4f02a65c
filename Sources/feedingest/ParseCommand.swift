import Fetch
import Foundation
import Ingest
import Syndication

/// `feedingest parse FILE... [--report FILE]`: articles of feed files as NDJSON, without a store.
enum ParseCommand: Subcommand {
    static let help = """
        Usage: feedingest parse [options] FILE|URL...

        Parses RSS, Atom and JSON Feed feeds and prints one JSON object per article on stdout, in
        document order, as soon as each article is parsed. FILE may be a path, - for stdin, or an
        http(s) URL, which is fetched and parsed as it downloads. Files ending in .gz (and gzip-encoded
        responses) are inflated as they stream. The first bytes tell XML from JSON; a JSON Content-Type
        or a .json name decides when they do not.

        Options:
        \(options.help())

        Exit status: 0 when every input parsed cleanly (repairs included), 1 when an input could not be
        read or had an unrecoverable error (the articles before it are still printed) or output could not
        be written, 2 for usage errors.

        Examples:
          feedingest parse feed.xml | jq -r .title
          curl -s https://example.org/feed.xml | feedingest parse - --report report.json
        """

    static let name = "parse"

    static let report = ValueOption<String>(
        "--report", "FILE", .text,
        help: "write a JSON report describing each input: format, version, encoding, feed metadata, repairs made, and the "
            + "error (with line and column), if any")
    static let charset = ValueOption<String>(
        "--charset", "NAME", .text, help: "decode inputs that do not say otherwise as NAME (like an HTTP charset)")
    static let sanitize = IngestCommand.sanitize.described(
        "clean the HTML of titles, summaries and content to an allow-list (no scripts, styles, frames, event handlers or "
            + "javascript: URLs); without it HTML is as written")
    static let quiet = CommonOptions.quiet("do not print errors on stderr (the exit status still tells)")

    static let options = OptionTable([report, charset, sanitize, quiet])

    /// What to parse, and how.
    struct Configuration {
        /// The inputs: paths, `-` for stdin, `http(s)` URLs.
        var inputs: [String]
        /// Where the report goes (`--report`).
        var reportPath: String?
        /// Whether errors stay off stderr (`--quiet`).
        var quiet = false
        var parser = FeedParserConfiguration()
    }

    static func configuration(_ arguments: Arguments) throws(UsageError) -> Configuration {
        guard !arguments.positional.isEmpty else {
            throw UsageError(message: "parse needs at least one FILE (or - for stdin)", hint: "see 'feedingest parse --help'")
        }
        var configuration = Configuration(inputs: arguments.positional, reportPath: arguments.text(report), quiet: arguments.contains(quiet))
        configuration.parser.xml.charsetHint = arguments.text(charset)
        configuration.parser.sanitizesHTML = arguments.contains(sanitize)
        return configuration
    }

    static func run(_ configuration: Configuration) -> Int32 {
        let quiet = configuration.quiet
        var inputs: [ParsedInput] = []
        var failed = false
        let reader = InputReader()
        // A closed stdout stops the parse (the consumer throws at its next chunk) instead of ending the process.
        StandardStreams.output.onClose = { _ in }
        for input in configuration.inputs {
            let parsed = reader.parse(input, configuration: configuration.parser)
            if StandardStreams.output.closedReason != nil { break }  // said below; the input's error is only that
            if let error = parsed.error {
                failed = true
                if !quiet { StandardStreams.error.write("feedingest: \(Self.describe(error, input: input))\n") }
            }
            inputs.append(parsed)
        }
        reader.shutdown()  // a network transfer thread ends (joined) now, not in a race with the process's exit
        StandardStreams.output.flush()
        if let reason = StandardStreams.output.closedReason {
            if !quiet {
                StandardStreams.error.write("feedingest: stdout closed (\(reason)): \(StatusObserver.plural(StandardStreams.output.lostRecords, "article")) "
                                            + "could not be written; parsing stopped\n")
            }
            return 1  // no report: it would describe inputs not parsed to their end
        }

        if let reportPath = configuration.reportPath {
            var json = JSONWriter()
            json.beginObject()
            json.field("generator", "feedingest \(Command.version)")
            json.key("inputs")
            json.beginArray()
            for input in inputs { input.write(to: &json) }
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

    /// `INPUT:LINE:COLUMN: message` for a parse error with a position, else `INPUT: message`.
    static func describe(_ error: IngestError, input: String) -> String {
        switch error {
        case .parse(let error) where error.line > 0: return "\(input):\(error.line):\(error.column): \(error.message)"
        case .parse(let error): return "\(input): \(error.message)"
        case .fetch(let error):
            var text = "\(input): \(error.message)"
            if let curlCode = error.curlCode { text += " [CURLcode \(curlCode.rawValue)]" }
            return text
        case .store(let error): return "\(input): \(error)"
        }
    }

    /// One input's outcome: what the parser learnt, and the error that stopped it (typed: reading or parsing).
    struct ParsedInput {
        var summary: FeedSummary
        var error: IngestError?

        /// The input's object in the report: the parser's summary, with the error of whichever layer failed.
        func write(to json: inout JSONWriter) {
            json.beginObject()
            var summary = summary
            summary.source = Redaction.redactedURL(summary.source)
            summary.metadata = summary.metadata.redactingPasswords()
            summary.writeFields(to: &json)
            switch error {
            case .parse(let error)?:
                json.key("error")
                error.write(to: &json)
            case .fetch(let error)?:
                json.key("error")
                json.beginObject()
                json.field("kind", "fetch")
                json.field("name", error.kind.name)
                json.field("message", Redaction.redactedText(error.message))
                if let status = error.status { json.field("status", status) }
                if let curlCode = error.curlCode { json.field("curlCode", Int(curlCode.rawValue)) }
                json.endObject()
            case .store?, nil:
                break
            }
            json.endObject()
        }
    }

    /// Reads every input through the path ingest uses: Fetch delivers a local file, standard input or an `http(s)`
    /// URL (inflating gzip, told by its magic number or `Content-Encoding`) to a ``FeedParsingConsumer`` as the bytes
    /// arrive, and each article is printed as soon as its item closes.
    final class InputReader {
        /// Local files and stdin: the user's own input, so no size limit (a 200 MB feed streams in flat memory).
        private let local: Fetcher = {
            var configuration = FetchConfiguration()
            configuration.maximumBodyBytes = .max
            configuration.maximumDecodedBytes = .max
            configuration.maximumInflationRatio = .infinity
            configuration.computesBodyHash = false  // nothing reads it here
            return Fetcher(configuration: configuration)
        }()
        /// URLs, with Fetch's default limits; made on first use, so a local parse starts no transfer thread.
        private var network: Fetcher?

        func parse(_ input: String, configuration: FeedParserConfiguration) -> ParsedInput {
            let request: FetchRequest
            let fetcher: Fetcher
            let lowered = input.lowercased()
            if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
                guard let url = URL(string: input), url.host != nil else {
                    let error = FetchError(kind: .invalidURL, message: "not a valid URL", url: input)
                    return ParsedInput(summary: FeedParsingConsumer(source: input).summary, error: .fetch(error))
                }
                if network == nil {
                    var configuration = FetchConfiguration()
                    configuration.computesBodyHash = false
                    network = Fetcher(configuration: configuration)
                }
                fetcher = network!
                request = FetchRequest(url: url)
            } else {
                fetcher = local
                request = input == "-" ? .standardInput : .localFile(input)
            }
            let consumer = PrintingConsumer(FeedParsingConsumer(source: input, configuration: configuration))
            let result = fetcher.fetch(request, into: consumer)
            StandardStreams.output.flush()
            var error = consumer.feed.failure(of: result)
            if error == nil, result.isNotModified {
                error = .fetch(FetchError(kind: .httpStatus(304), message: "not modified (HTTP 304) without validators", url: input,
                                          status: 304))
            }
            return ParsedInput(summary: consumer.feed.summary, error: error)
        }

        func shutdown() {
            network?.shutdown()
            network = nil
        }
    }

    /// Passes the body to the feed's consumer and flushes stdout whenever it has parsed every byte that arrived, so
    /// articles go out as the body arrives, never held to the end (nor written a few at a time on a fast transfer).
    final class PrintingConsumer: FetchConsumer {
        let feed: FeedParsingConsumer
        private var json = JSONWriter()

        init(_ feed: FeedParsingConsumer) {
            self.feed = feed
            feed.onArticle = { [unowned self] article, _ in
                json.reset()
                article.writeRedacted(to: &json)
                json.raw(0x0A)
                _ = json.withBytes { StandardStreams.output.writeRecord($0) }
            }
        }

        /// Stdout closed (the reader exited): nothing more can be printed, so the transfer stops.
        struct OutputClosed: Error {}

        func fetchDidReceiveResponse(_ response: FetchResponse) throws {
            try feed.fetchDidReceiveResponse(response)
        }

        func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws {
            if StandardStreams.output.closedReason != nil { throw OutputClosed() }
            try feed.fetchDidReceive(bytes)
        }

        func fetchWillWait() {
            StandardStreams.output.flush()
        }

        func fetchDidFinish() throws {
            try feed.fetchDidFinish()
        }
    }
}
