import Downloads
import Fetch
import Foundation
import Support

/// The download command's progress on stderr: on a terminal a live block (one line per active download and a total
/// line), above it one line per finished or failed download; otherwise only those lines.
final class DownloadProgressObserver: DownloadObserver, @unchecked Sendable {
    // @unchecked Sendable: the mutable state is touched only by `download(_:)`, which the manager calls on its one
    // serial event queue.
    private let isTerminal: Bool
    private let stream: OutputStream
    private var drawnLines = 0
    private var active: [ActiveDownload] = []
    private var done = 0
    private var failed = 0
    private var bytes: Int64 = 0

    /// An observer writing to `stream` (standard error), with the live block when `isTerminal`.
    init(isTerminal: Bool, stream: OutputStream = StandardStreams.error) {
        self.isTerminal = isTerminal
        self.stream = stream
    }

    func download(_ event: DownloadEvent) {
        switch event {
        case .queued(let count):
            print("queued \(count) download\(count == 1 ? "" : "s")")
        case .staleFile(let path):
            print("stale partial file without a tracker row, left alone: \(path)")
        case .started:
            break
        case .progress(let list):
            active = list
        case .finished(let result):
            done += 1
            bytes += result.bytesReceived
            active.removeAll { $0.id == result.record.id }
            print("downloaded \(result.record.path) (\(Self.size(result.record.committedOffset))" + Self.resumption(result) + ")")
        case .failed(let result):
            active.removeAll { $0.id == result.record.id }
            bytes += result.bytesReceived
            if result.record.state == .paused {
                print("paused \(result.record.path) at \(Self.size(result.record.committedOffset))")
            } else {
                failed += 1
                let error = result.error
                print("failed \(Redaction.redactedURL(result.record.url)): \(error?.message ?? "unknown error")" + (error.map { " [\($0.kindName)]" } ?? ""))
            }
        case .removed(let record):
            print("removed \(record.path) (retention)")
        case .storeFailed(let error):
            failed += 1
            print("store error: \(error)")
        case .runFinished(let summary):
            active = []
            var line = "downloads: \(summary.completed) done, \(summary.failed) failed"
            if summary.paused > 0 { line += ", \(summary.paused) paused" }
            if summary.removed > 0 { line += ", \(summary.removed) removed" }
            line += ", \(Self.size(summary.bytes)) received"
            if summary.failedForGood > 0 { line += "; " + Self.failedForGood(summary.failedForGood) }
            print(line)
            return
        }
        redraw()
    }

    /// A permanent line, above the live block.
    private func print(_ line: String) {
        stream.write(clearBlock() + "feedingest: " + Redaction.redactedText(line) + "\n")
        drawnLines = 0
    }

    private func clearBlock() -> String {
        guard isTerminal, drawnLines > 0 else { return "" }
        return "\r" + String(repeating: "\u{1B}[1A", count: drawnLines) + "\u{1B}[J"
    }

    private func redraw() {
        guard isTerminal else { return }
        var text = clearBlock()
        let width = 20
        var total: Int64 = 0
        var rate = 0.0
        for download in active {
            total += download.bytes
            rate += download.rate
            var line = ""
            if let expected = download.expectedLength, expected > 0 {
                let fraction = min(1, Double(download.bytes) / Double(expected))
                let filled = Int(fraction * Double(width))
                line += String(format: "%3d%% [", Int(fraction * 100)) + String(repeating: "#", count: filled)
                    + String(repeating: "-", count: width - filled) + "] " + Self.size(download.bytes) + " / " + Self.size(expected)
            } else {
                line += "     [" + String(repeating: "?", count: width) + "] " + Self.size(download.bytes)
            }
            line += "  " + Self.size(Int64(download.rate)) + "/s"
            if let left = download.secondsLeft { line += "  ETA " + Self.duration(left) }
            line += "  " + (download.path as NSString).lastPathComponent
            text += line + "\n"
        }
        text += "total: \(active.count) active, \(done) done, \(failed) failed, \(Self.size(total + bytes)), \(Self.size(Int64(rate)))/s\n"
        drawnLines = active.count + 1
        stream.write(text)
    }

    /// `, resumed from 1.0 MiB` when the server honoured the range, `, restarted from zero instead of resuming from
    /// 1.0 MiB: why` when it sent the whole file again, else nothing.
    static func resumption(_ result: DownloadResult) -> String {
        if let restart = result.restart, result.resumedFrom == 0 {
            return ", restarted from zero instead of resuming from \(size(restart.askedFrom)): \(restart.reason)"
        }
        return result.resumedFrom > 0 ? ", resumed from \(size(result.resumedFrom))" : ""
    }

    /// How many downloads failed for good and how to try them again.
    static func failedForGood(_ count: Int) -> String {
        "\(count) failed for good, not retried ('feedingest download --retry-failed' tries \(count == 1 ? "it" : "them") again)"
    }

    static func size(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }

    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        return total >= 3600 ? String(format: "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60)
            : String(format: "%d:%02d", total / 60, total % 60)
    }
}
