// StoreProbe: a test-only executable over ArticleStore.
//
//   StoreProbe ingest --store PATH [--feeds 4] [--articles 1000] [--batch 64] [--version 1] [--reverse]
//                     [--pause-every 0] [--busy-ms 5000]
//       Ingests the deterministic ProbeData set (TestSupport), feed by feed, and reports each commit on stdout as it
//       happens: `commit FEED INDEX` (every article of FEED up to INDEX is durable), `finish FEED SEEN NEW UPDATED
//       UNCHANGED` and at the end `done NEW UPDATED UNCHANGED`. The ArticleStore tests SIGKILL it at random commits.
//
// The store benchmark that used to live here is `feedingest-store-bench` (Benchmarks/StoreBench).

import ArticleStore
import Foundation
import TestSupport

/// Writes a line to stdout at once (unbuffered), so a parent process sees it before a SIGKILL.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("StoreProbe: " + message + "\n").utf8))
    exit(1)
}

func ingest(_ options: CommandOptions) throws(StoreError) {
    guard let path = options.values["store"] else { fail("ingest needs --store PATH") }
    var configuration = StoreConfiguration()
    configuration.commitBatchSize = options.int("batch", 64)
    configuration.busyTimeout = .milliseconds(options.int("busy-ms", 5000))
    let feeds = options.int("feeds", 4)
    let articles = options.int("articles", 1000)
    let version = options.int("version", 1)
    let pauseEvery = options.int("pause-every", 0)
    let store = try Store(path: path, configuration: configuration)
    let context = try store.makeContext()
    let ids = try context.feeds(urls: (0..<feeds).map(ProbeData.feedURL))
    var totals = (new: 0, updated: 0, unchanged: 0)
    let order = options.flags.contains("reverse") ? Array((0..<feeds).reversed()) : Array(0..<feeds)
    for feed in order {
        let id = ids[feed]
        context.beginFeedOrFail(id)
        for index in 0..<articles {
            let committed = try context.store(ProbeData.article(feed: feed, index: index, version: version), in: id)
            if !committed.isEmpty { emit("commit \(feed) \(index)") }
            if pauseEvery > 0, index % pauseEvery == 0 { usleep(1000) }
        }
        let summary = try context.finishFeed(id, FeedSuccess(validators: FeedValidators(etag: "\"probe-\(feed)-v\(version)\"")))
        emit("commit \(feed) \(articles - 1)")
        emit("finish \(feed) \(summary.seen) \(summary.new) \(summary.updated) \(summary.unchanged)")
        totals.new += summary.new
        totals.updated += summary.updated
        totals.unchanged += summary.unchanged
    }
    emit("done \(totals.new) \(totals.updated) \(totals.unchanged)")
}

extension StoreContext {
    fileprivate func beginFeedOrFail(_ id: FeedID) {
        do { try beginFeed(id) } catch { fail("\(error)") }
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { fail("usage: StoreProbe ingest [options]") }
let options = CommandOptions(arguments.dropFirst(2), flagNames: ["reverse"])
do {
    switch arguments[1] {
    case "ingest": try ingest(options)
    default: fail("unknown mode \(arguments[1])")
    }
} catch {
    fail("\(error)")
}
