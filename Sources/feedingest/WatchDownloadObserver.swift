import Downloads

/// `watch --download`'s lines on stderr (one per finished, failed or paused download) and its counters for the metrics.
struct WatchDownloadObserver: DownloadObserver {
    let stats: WatchStats
    let quiet: Bool

    /// The bytes a download added to its file: from where it resumed to the committed (flushed and recorded) offset.
    /// (``DownloadResult/bytesReceived`` counts what libcurl handed over, which was seen to exceed the file by 16 KiB.)
    static func written(_ result: DownloadResult) -> Int64 { max(0, result.record.committedOffset - result.resumedFrom) }

    func download(_ event: DownloadEvent) {
        switch event {
        case .finished(let result):
            stats.countDownload(outcome: "done", bytes: Self.written(result))
            if !quiet {
                stats.line("feedingest: downloaded \(result.record.path) (\(DownloadProgressObserver.size(result.record.committedOffset))"
                           + DownloadProgressObserver.resumption(result) + ")")
            }
        case .failed(let result):
            if result.record.state == .paused {
                stats.countDownload(outcome: "paused", bytes: Self.written(result))
                if !quiet { stats.line("feedingest: paused \(result.record.path) at \(DownloadProgressObserver.size(result.record.committedOffset))") }
            } else {
                stats.countDownload(outcome: "failed", bytes: Self.written(result))
                let error = result.error
                var line = "feedingest: download failed \(result.record.url): \(error?.message ?? "unknown error")" + (error.map { " [\($0.kindName)]" } ?? "")
                if result.record.isPermanentFailure { line += "; 'feedingest download --retry-failed' tries it again" }
                stats.line(line)
            }
        case .staleFile(let path):
            if !quiet { stats.line("feedingest: stale partial file without a tracker row, left alone: \(path)") }
        case .removed(let record):
            if !quiet { stats.line("feedingest: removed \(record.path) (retention)") }
        case .storeFailed(let error):
            stats.countDownload(outcome: "failed", bytes: 0)
            stats.line("feedingest: download store error: \(error)")
        case .queued, .started, .progress, .runFinished:
            break
        }
    }
}
