import Fetch
import Ingest
import Support
import Syndication

extension ParseCommand {
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
}
