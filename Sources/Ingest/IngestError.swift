import ArticleStore
import Fetch
import Syndication

/// Why a feed failed, with the typed error of the layer that failed: the transfer, the document or the store.
///
/// Observers, the run report and `feedingest feeds` match on ``kind`` and ``code`` (or on the error inside), never on
/// the text; ``description`` is the text for people, without the feed's URL (whoever reports it names the feed).
public enum IngestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The transfer failed: an HTTP status, the network, a limit, an unreadable local file.
    case fetch(FetchError)
    /// The document could not be parsed: not well-formed, truncated, not a feed, an unknown encoding.
    case parse(FeedError)
    /// The store could not record the feed or its articles.
    case store(StoreError)

    /// The layer that failed: `fetch`, `parse` or `store`.
    public var kind: String {
        switch self {
        case .fetch: return "fetch"
        case .parse: return "parse"
        case .store: return "store"
        }
    }

    /// The error's kind within its layer, as a stable lowercase name (`http-status`, `dns-failure`, `tag-mismatch`,
    /// `not-a-feed`, `read-only`, ...): what scripts match on.
    public var code: String {
        switch self {
        case .fetch(let error): return error.kind.name
        case .parse(let error):
            switch error.kind {
            case .notAFeed: return "not-a-feed"
            case .xml(let code): return code.name
            case .json(let code): return code.name
            }
        case .store(let error): return error.kind.name
        }
    }

    /// `kind.code`, as the store records it (`fetch.http-status`).
    public var qualifiedCode: String { "\(kind).\(code)" }

    /// The reason for people: the parse error with its line and column, the fetch message with libcurl's code, or
    /// the store error with its hint; without the feed's URL.
    public var description: String {
        switch self {
        case .fetch(let error):
            var text = error.message
            if let curlCode = error.curlCode { text += " [CURLcode \(curlCode.rawValue)]" }
            return text
        case .parse(let error):
            return error.line > 0 ? "line \(error.line), column \(error.column): \(error.message)" : error.message
        case .store(let error):
            return "store: \(error)"
        }
    }

    /// The failure a fetch ended with, typed by the layer that caused it: an error the consumer threw (a `FeedError`,
    /// a `StoreError`) is unwrapped from ``FetchError/Kind/consumerFailed``.
    public init(_ error: FetchError) {
        if error.kind == .consumerFailed {
            if let parse = error.underlying as? FeedError {
                self = .parse(parse)
                return
            }
            if let store = error.underlying as? StoreError {
                self = .store(store)
                return
            }
        }
        self = .fetch(error)
    }
}

extension StoreError.Kind {
    /// The kind as a stable lowercase name (`sqlite`, `read-only`, `newer-schema`, ...).
    public var name: String {
        switch self {
        case .sqlite: return "sqlite"
        case .notAFeedingestStore: return "not-a-feedingest-store"
        case .newerSchema: return "newer-schema"
        case .olderSchema: return "older-schema"
        case .readOnly: return "read-only"
        case .unknownFeed: return "unknown-feed"
        case .feedNotStarted: return "feed-not-started"
        case .feedAlreadyStarted: return "feed-already-started"
        case .invalidStoredValue: return "invalid-stored-value"
        case .postgres: return "postgres"
        case .invalidLocation: return "invalid-location"
        case .unreachable: return "unreachable"
        case .authenticationFailed: return "authentication-failed"
        case .missingDatabase: return "missing-database"
        case .leaseLost: return "lease-lost"
        }
    }
}
