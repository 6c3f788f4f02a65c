import Downloads
import Fetch
import Testing

/// Which failures are permanent (the download is marked failed for good, its partial removed, no run tries it again
/// until it is queued again) and which are transient (the partial is kept and resumed).
@Suite("Failure policy")
struct FailurePolicyTests {
    @Test(arguments: [400, 401, 402, 403, 404, 405, 406, 409, 410, 411, 412, 413, 414, 415, 422, 451, 499])
    func clientErrorsThatARetryMeetsAgainArePermanent(_ status: Int) {
        #expect(FailurePolicy.isPermanent(status: status))
        #expect(FailurePolicy.isPermanent(.httpStatus(status)))
    }

    @Test(arguments: [200, 206, 304, 408, 416, 421, 423, 425, 429, 500, 502, 503, 504, 599])
    func timeoutsRateLimitsRangesAndServerErrorsAreTransient(_ status: Int) {
        #expect(!FailurePolicy.isPermanent(status: status))
        #expect(!FailurePolicy.isPermanent(.httpStatus(status)))
    }

    @Test func fetchKindsThatCannotChangeArePermanent() {
        #expect(FailurePolicy.isPermanent(.gone))
        #expect(FailurePolicy.isPermanent(.unsupportedScheme))
        #expect(FailurePolicy.isPermanent(.invalidURL))
        let transient: [FetchError.Kind] = [.rateLimited(retryAfter: nil), .serviceUnavailable(retryAfter: nil), .truncated, .network,
                                            .timeout, .connectionRefused, .dnsFailure, .unreachable, .tlsFailure, .cancelled,
                                            .consumerFailed, .tooManyRedirects]
        for kind in transient { #expect(!FailurePolicy.isPermanent(kind), "\(kind)") }
    }

    @Test func aDownloadErrorSaysWhetherItIsPermanent() {
        let url = "http://127.0.0.1/a.mp3"
        #expect(DownloadError(kind: .fetch, message: "", url: url, fetchKind: .httpStatus(404), status: 404).isPermanent)
        #expect(DownloadError(kind: .fetch, message: "", url: url, fetchKind: .gone, status: 410).isPermanent)
        #expect(DownloadError(kind: .unsupportedScheme, message: "", url: url).isPermanent)
        #expect(!DownloadError(kind: .fetch, message: "", url: url, fetchKind: .serviceUnavailable(retryAfter: nil), status: 503).isPermanent)
        #expect(!DownloadError(kind: .fetch, message: "", url: url, fetchKind: .truncated, status: 200).isPermanent)
        #expect(!DownloadError(kind: .diskFull, message: "", url: url).isPermanent)
        #expect(!DownloadError(kind: .badResponse, message: "", url: url, status: 206).isPermanent)
    }

    @Test func statusesAreDescribedWithTheirReasonPhrase() {
        #expect(FailurePolicy.describe(status: 404) == "HTTP 404 Not Found")
        #expect(FailurePolicy.describe(status: 410) == "HTTP 410 Gone")
        #expect(FailurePolicy.describe(status: 403) == "HTTP 403 Forbidden")
        #expect(FailurePolicy.describe(status: 499) == "HTTP 499")
    }
}
