import ArticleStore
import Downloads
@testable import feedingest
import Foundation
import Testing

/// What `feedingest download` shows on stderr: on a terminal a live block (a line per active download with a bar,
/// bytes, rate and time left, and a total line) redrawn in place; otherwise one line per finished or failed download.
@Suite("Download progress display")
struct DownloadProgressTests {
    /// Feeds `events` to an observer writing into a pipe and returns what it wrote.
    static func render(isTerminal: Bool, _ events: [DownloadEvent]) throws -> String {
        var descriptors: [Int32] = [0, 0]
        try #require(pipe(&descriptors) == 0)
        let observer = DownloadProgressObserver(isTerminal: isTerminal, stream: feedingest.OutputStream(descriptor: descriptors[1], capacity: 1))
        for event in events { observer.download(event) }
        close(descriptors[1])
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptors[0], $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        close(descriptors[0])
        return String(decoding: bytes, as: UTF8.self)
    }

    static let events: [DownloadEvent] = {
        let record = DownloadRecord(id: DownloadID(rawValue: 1), url: "http://127.0.0.1/a.mp3", path: "/d/Show/a.mp3", state: .done)
        var done = record
        done.committedOffset = 4 << 20
        var failed = DownloadRecord(id: DownloadID(rawValue: 2), url: "ftp://127.0.0.1/b.mp3", path: "/d/Show/b.mp3", state: .failed)
        failed.error = "refused"
        let error = DownloadError(kind: .unsupportedScheme, message: "refused: not an http or https URL", url: failed.url)
        return [
            .queued(count: 2),
            .started(record, resumingFrom: 1 << 20),
            .progress([ActiveDownload(id: record.id, url: record.url, path: record.path, bytes: 2 << 20, expectedLength: 4 << 20,
                                      rate: 1_048_576, resumedFrom: 1 << 20)]),
            .failed(DownloadResult(record: failed, error: error, bytesReceived: 0, resumedFrom: 0)),
            .finished(DownloadResult(record: done, error: nil, bytesReceived: 3 << 20, resumedFrom: 1 << 20)),
            .runFinished({ var summary = DownloadSummary(); summary.completed = 1; summary.failed = 1; summary.bytes = 3 << 20; return summary }()),
        ]
    }()

    @Test func onATerminalEachActiveDownloadHasABarAndATotalLine() throws {
        let text = try Self.render(isTerminal: true, Self.events)
        #expect(text.contains(" 50% [##########----------] 2.0 MiB / 4.0 MiB  1.0 MiB/s  ETA 0:02  a.mp3\n"), "\(text)")
        #expect(text.contains("total: 1 active, 0 done, 0 failed"))
        #expect(text.contains("\u{1B}[1A\u{1B}[J"))  // the block is redrawn in place
        #expect(text.contains("feedingest: downloaded /d/Show/a.mp3 (4.0 MiB, resumed from 1.0 MiB)\n"))
        #expect(text.contains("feedingest: failed ftp://127.0.0.1/b.mp3: refused: not an http or https URL [download.unsupported-scheme]\n"))
    }

    @Test func otherwiseOneLinePerFinishedOrFailedDownload() throws {
        let text = try Self.render(isTerminal: false, Self.events)
        #expect(text == """
            feedingest: queued 2 downloads
            feedingest: failed ftp://127.0.0.1/b.mp3: refused: not an http or https URL [download.unsupported-scheme]
            feedingest: downloaded /d/Show/a.mp3 (4.0 MiB, resumed from 1.0 MiB)
            feedingest: downloads: 1 done, 1 failed, 3.0 MiB received

            """)
    }

    @Test func ratesParseWithBinaryUnits() {
        #expect(DownloadCommand.rate("500k") == 512_000)
        #expect(DownloadCommand.rate("2M") == 2 << 20)
        #expect(DownloadCommand.rate("1.5MiB/s") == 1_572_864)
        #expect(DownloadCommand.rate("100000") == 100_000)
        #expect(DownloadCommand.rate("fast") == nil && DownloadCommand.rate("0") == nil && DownloadCommand.rate("-1k") == nil)
    }
}
