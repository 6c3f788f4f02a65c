/// A watch's metrics in Prometheus's text exposition format, for node_exporter's textfile collector: the counters of a
/// ``WatchStatistics`` and the gauges of a ``WatchSnapshot``.
///
/// Counters: `feedingest_fetches_total{outcome}`, `feedingest_articles_total{change}`, `feedingest_bytes_total`,
/// `feedingest_failures_total`, and with downloads `feedingest_downloads_total{outcome}` and
/// `feedingest_download_bytes_total`. Gauges: `feedingest_feeds`, `feedingest_in_flight`, `feedingest_offline`,
/// `feedingest_due_next_minute`, `feedingest_list_problems`. Every outcome is listed, at zero too.
public enum WatchMetrics {
    /// The exposition of `counters` and `snapshot`; the download metrics only when `downloads` is set.
    public static func text(_ counters: WatchStatistics.Counters, _ snapshot: WatchSnapshot, downloads: Bool) -> String {
        let c = counters
        var text = "# HELP feedingest_fetches_total Feeds fetched (or passed over) by outcome.\n"
        text += "# TYPE feedingest_fetches_total counter\n"
        for outcome in WatchStatistics.FetchOutcome.allCases {
            text += "feedingest_fetches_total{outcome=\"\(outcome.rawValue)\"} \(c.fetches[outcome] ?? 0)\n"
        }
        text += "# HELP feedingest_articles_total Articles committed, new or updated.\n"
        text += "# TYPE feedingest_articles_total counter\n"
        text += "feedingest_articles_total{change=\"new\"} \(c.new)\n"
        text += "feedingest_articles_total{change=\"updated\"} \(c.updated)\n"
        text += "# HELP feedingest_bytes_total Feed body bytes received.\n# TYPE feedingest_bytes_total counter\n"
        text += "feedingest_bytes_total \(c.bytes)\n"
        text += "# HELP feedingest_failures_total Failed fetches (HTTP, network, parse or store errors).\n"
        text += "# TYPE feedingest_failures_total counter\nfeedingest_failures_total \(c.failures)\n"
        text += "# HELP feedingest_feeds Feeds on the list.\n# TYPE feedingest_feeds gauge\nfeedingest_feeds \(snapshot.feeds)\n"
        text += "# HELP feedingest_in_flight Feeds being fetched now.\n# TYPE feedingest_in_flight gauge\n"
        text += "feedingest_in_flight \(snapshot.inFlight)\n"
        text += "# HELP feedingest_offline 1 while remote feeds are paused for want of a network.\n"
        text += "# TYPE feedingest_offline gauge\nfeedingest_offline \(snapshot.offlineReason == nil ? 0 : 1)\n"
        text += "# HELP feedingest_due_next_minute Feeds due within the next minute.\n# TYPE feedingest_due_next_minute gauge\n"
        text += "feedingest_due_next_minute \(snapshot.dueWithinMinute)\n"
        text += "# HELP feedingest_list_problems Bad lines in the feed list.\n# TYPE feedingest_list_problems gauge\n"
        text += "feedingest_list_problems \(c.listProblems)\n"
        if downloads {
            text += "# HELP feedingest_downloads_total Enclosure downloads ended, by outcome (paused: stopped offline or by a signal).\n"
            text += "# TYPE feedingest_downloads_total counter\n"
            for outcome in WatchStatistics.DownloadOutcome.allCases {
                text += "feedingest_downloads_total{outcome=\"\(outcome.rawValue)\"} \(c.downloads[outcome] ?? 0)\n"
            }
            text += "# HELP feedingest_download_bytes_total Enclosure bytes written to the download files (from the resume offset to the committed one).\n# TYPE feedingest_download_bytes_total counter\n"
            text += "feedingest_download_bytes_total \(c.downloadBytes)\n"
        }
        return text
    }
}
