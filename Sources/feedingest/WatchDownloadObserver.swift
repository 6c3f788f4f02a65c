import Downloads
import Watch

/// `watch --download`'s lines on stderr (one per finished, failed or paused download) and its counters for the metrics.
struct WatchDownloadObserver: DownloadObserver {
    let statistics: WatchStatistics
    let console: WatchConsole
    private var quiet: Bool { console.quiet }

    /// The bytes a download added to its file: from where it resumed to the committed (flushed and recorded) offset.
    /// (``DownloadResult/bytesReceived`` counts what libcurl handed over, which was seen to exceed the file by 16 KiB.)
    static func written(_ result: DownloadResult) -> Int64 { max(0, result.record.committedOffset - result.resumedFrom) }

    func download(_ event: DownloadEvent) {
        switch event {
        case .finished(let result):
            statistics.countDownload(.done, bytes: Self.written(result))
            if !quiet {
                console.line("feedingest: downloaded \(result.record.path) (\(DownloadProgressObserver.size(result.record.committedOffset))"
                             + DownloadProgressObserver.resumption(result) + ")")
            }
        case .failed(let result):
            if result.record.state == .paused {
                statistics.countDownload(.paused, bytes: Self.written(result))
                if !quiet { console.line("feedingest: paused \(result.record.path) at \(DownloadProgressObserver.size(result.record.committedOffset))") }
            } else {
                statistics.countDownload(.failed, bytes: Self.written(result))
                let error = result.error
                var line = "feedingest: download failed \(result.record.url): \(error?.message ?? "unknown error")" + (error.map { " [\($0.kindName)]" } ?? "")
                if result.record.isPermanentFailure { line += "; 'feedingest download --retry-failed' tries it again" }
                console.line(line)
            }
        case .staleFile(let path):
            if !quiet { console.line("feedingest: stale partial file without a tracker row, left alone: \(path)") }
        case .removed(let record):
            if !quiet { console.line("feedingest: removed \(record.path) (retention)") }
        case .storeFailed(let error):
            statistics.countDownload(.failed, bytes: 0)
            console.line("feedingest: download store error: \(error)")
        case .queued, .started, .progress, .runFinished:
            break
        }
    }
}
