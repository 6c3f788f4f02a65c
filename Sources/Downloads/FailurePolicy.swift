import Fetch

/// Which download failures are permanent: those a retry of the same request meets again.
///
/// Pure functions; ``DownloadManager`` applies them. Permanent: a 4xx status but 408, 416, 421, 423, 425 and 429,
/// and a URL that cannot be fetched at all (not http or https, malformed). 401 and 403 count as permanent: a retry
/// sends the same request with the same credentials (none, or those in the URL), and a signed URL that expired stays
/// expired; a refusal that is lifted later (a block, a login fixed on the server) is tried again on demand
/// (`download --retry-failed`).
///
/// Transient: every other failure, among them 408 (Request Timeout), 421 (Misdirected Request: another connection
/// may do), 423 (Locked), 425 (Too Early), 429 (Too Many Requests), every 5xx, resets, timeouts and network errors.
/// 416 (Range Not Satisfiable) is about the range asked for, not the file: ``ResumeRules`` handles it.
public enum FailurePolicy {
    /// The 4xx statuses that may pass by themselves.
    static let transientClientStatuses: Set<Int> = [408, 416, 421, 423, 425, 429]

    /// Whether a response with `status` says the download will fail again however often it is retried.
    public static func isPermanent(status: Int) -> Bool {
        (400..<500).contains(status) && !transientClientStatuses.contains(status)
    }

    /// Whether a transfer that failed with `kind` would fail again however often it is retried.
    ///
    /// Permanent: a permanent status (``isPermanent(status:)``), `410 Gone`, and a URL that cannot be fetched (a
    /// scheme other than http and https, also through a redirect, or a malformed URL).
    public static func isPermanent(_ kind: FetchError.Kind) -> Bool {
        switch kind {
        case .gone, .unsupportedScheme, .invalidURL: return true
        case .httpStatus(let status): return isPermanent(status: status)
        default: return false
        }
    }

    /// The status's reason phrase (RFC 9110, section 15), for the 4xx statuses a download meets; `nil` for others.
    public static func reasonPhrase(_ status: Int) -> String? {
        switch status {
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 402: return "Payment Required"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 406: return "Not Acceptable"
        case 407: return "Proxy Authentication Required"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 411: return "Length Required"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 415: return "Unsupported Media Type"
        case 416: return "Range Not Satisfiable"
        case 417: return "Expectation Failed"
        case 421: return "Misdirected Request"
        case 422: return "Unprocessable Content"
        case 423: return "Locked"
        case 425: return "Too Early"
        case 426: return "Upgrade Required"
        case 428: return "Precondition Required"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 451: return "Unavailable For Legal Reasons"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return nil
        }
    }

    /// `HTTP 404 Not Found` (`HTTP 499` without a known phrase).
    public static func describe(status: Int) -> String {
        "HTTP \(status)" + (reasonPhrase(status).map { " " + $0 } ?? "")
    }
}
