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
            if let replacement = parsed.summary.textReplacement, !quiet {
                StandardStreams.error.write("feedingest: \(input): \(replacement)\n")
            }
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
}
