import ArticleStore
import Foundation
import Ingest
import Testing
@testable import Watch

/// The metrics file's text: every metric named, typed and described, every outcome listed (at zero too).
@Suite("WatchMetrics: the Prometheus text exposition")
struct WatchMetricsTests {
    static func counters() -> WatchStatistics.Counters {
        var counters = WatchStatistics.Counters(day: Date(timeIntervalSince1970: 0))
        counters.fetches = [.ok: 3, .notModified: 2, .storeUnavailable: 1]
        counters.new = 5
        counters.updated = 1
        counters.bytes = 4_096
        counters.failures = 0
        counters.listProblems = 1
        counters.downloads = [.done: 2]
        counters.downloadBytes = 512
        return counters
    }

    /// The lines that are samples, not comments.
    static func samples(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
    }

    @Test func theCountersAndTheGaugesAreExposed() {
        let snapshot = WatchSnapshot(feeds: 7, dueWithinMinute: 2, inFlight: 1, offlineReason: "no default route", parked: 4)
        let text = WatchMetrics.text(Self.counters(), snapshot, downloads: false)
        #expect(Self.samples(text) == [
            "feedingest_fetches_total{outcome=\"ok\"} 3",
            "feedingest_fetches_total{outcome=\"not_modified\"} 2",
            "feedingest_fetches_total{outcome=\"failed\"} 0",
            "feedingest_fetches_total{outcome=\"rate_limited\"} 0",
            "feedingest_fetches_total{outcome=\"offline\"} 0",
            "feedingest_fetches_total{outcome=\"deferred\"} 0",
            "feedingest_fetches_total{outcome=\"cancelled\"} 0",
            "feedingest_fetches_total{outcome=\"claimed_elsewhere\"} 0",
            "feedingest_fetches_total{outcome=\"lease_lost\"} 0",
            "feedingest_fetches_total{outcome=\"store_unavailable\"} 1",
            "feedingest_articles_total{change=\"new\"} 5",
            "feedingest_articles_total{change=\"updated\"} 1",
            "feedingest_bytes_total 4096",
            "feedingest_failures_total 0",
            "feedingest_feeds 7",
            "feedingest_in_flight 1",
            "feedingest_offline 1",
            "feedingest_due_next_minute 2",
            "feedingest_list_problems 1",
        ])
        #expect(text.hasSuffix("\n"))
        for metric in ["fetches_total", "articles_total", "bytes_total", "failures_total"] {
            #expect(text.contains("# TYPE feedingest_\(metric) counter\n"), "\(metric)")
        }
        for metric in ["feeds", "in_flight", "offline", "due_next_minute", "list_problems"] {
            #expect(text.contains("# TYPE feedingest_\(metric) gauge\n"), "\(metric)")
        }
        #expect(!text.contains("download"), "no download metrics without --download")
        let online = WatchMetrics.text(Self.counters(), WatchSnapshot(), downloads: false)
        #expect(online.contains("\nfeedingest_offline 0\n"))
    }

    @Test func theDownloadMetricsComeWithDownloads() {
        let text = WatchMetrics.text(Self.counters(), WatchSnapshot(), downloads: true)
        #expect(Self.samples(text).suffix(4) == [
            "feedingest_downloads_total{outcome=\"done\"} 2",
            "feedingest_downloads_total{outcome=\"failed\"} 0",
            "feedingest_downloads_total{outcome=\"paused\"} 0",
            "feedingest_download_bytes_total 512",
        ])
        #expect(text.contains("# TYPE feedingest_downloads_total counter\n") && text.contains("# TYPE feedingest_download_bytes_total counter\n"))
    }
}
