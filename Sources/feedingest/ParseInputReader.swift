import Fetch
import Foundation
import Ingest
import Syndication

extension ParseCommand {
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
