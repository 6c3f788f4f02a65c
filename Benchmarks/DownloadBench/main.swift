// feedingest-download-bench: the enclosure downloader over loopback (make bench-download):
//
//     swift run -c release feedingest-download-bench [--megabytes 200] [--rounds 3]
//
// A file of random bytes (200 MB by default) is served by the fault server's Range-capable /media route on 127.0.0.1.
// Side by side in one run, best of --rounds each:
//   - the baseline: the curl command line downloading it to a file (libcurl's own speed against the same server);
//   - `feedingest download` (the release binary beside this one) into a fresh store and directory;
//   - the same with a 2 MB file, for the peak RSS comparison (flat memory: the 200 MB download should not need more);
// then a resume: `feedingest download --max-rate` killed (SIGKILL) once half the file is on disk, the committed offset
// read back with `feedingest downloads --json`, and a rerun: the server's log shows where the resumed request started
// (it must be the committed offset, never below), and the file's SHA-256 must equal the source's.
// Prints a table, then one DOWNLOAD_BENCH_JSON line.

import Foundation
import TestSupport

struct Options {
    var megabytes = 200
    var rounds = 3

    init(_ arguments: [String]) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let value = index + 1 < arguments.count ? arguments[index + 1] : ""
            switch argument {
            case "--megabytes": megabytes = Int(value) ?? megabytes; index += 1
            case "--rounds": rounds = max(1, Int(value) ?? rounds); index += 1
            default: break
            }
            index += 1
        }
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("feedingest-download-bench: \(message)\n".utf8))
    exit(1)
}

/// Writes `bytes` random bytes to `url`, 1 MiB at a time (this process stays small: its children's peak RSS cannot be
/// measured below its own).
func writeRandomFile(_ url: URL, bytes: Int) throws {
    guard FileManager.default.createFile(atPath: url.path, contents: nil) else { throw TestSupportError("cannot create \(url.path)") }
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    var random = SplitMix64(seed: 0xD0_1A_D5)
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    var left = bytes
    while left > 0 {
        let count = min(left, chunk.count)
        chunk.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt64.self)
            for index in words.indices { words[index] = random.next() }
        }
        try handle.write(contentsOf: chunk[0..<count])
        left -= count
    }
}

func sha256(_ path: String) -> String {
    let run = try? ChildProcess.run("/usr/bin/sha256sum", [path])
    return String(run?.standardOutput.prefix(64) ?? "")
}

func size(_ path: String) -> Int64 {
    var status = stat()
    return stat(path, &status) == 0 ? Int64(status.st_size) : -1
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
guard let feedingest = Paths.builtExecutable("feedingest")?.path ?? {
    let sibling = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("feedingest").path
    return FileManager.default.isExecutableFile(atPath: sibling) ? sibling : nil
}() else { fail("build the feedingest binary first (make bench-download does)") }

let work = try Paths.temporaryDirectory("download-bench")
defer { try? FileManager.default.removeItem(at: work) }
let server = try FaultServer()
let total = options.megabytes * 1_000_000
let big = work.appendingPathComponent("big.bin"), small = work.appendingPathComponent("small.bin")
try writeRandomFile(big, bytes: total)
try writeRandomFile(small, bytes: 2_000_000)
let bigSHA = sha256(big.path)

func control(_ token: String, _ query: String) {
    guard (try? Loopback.get(port: server.port, "/media-control?token=\(token)&\(query)"))?.status == 200 else { fail("media-control failed") }
}

func log(_ token: String) -> [[String: Any]] {
    guard let body = try? Loopback.get(port: server.port, "/media-log?token=\(token)").body else { return [] }
    return (try? JSONSerialization.jsonObject(with: body) as? [[String: Any]]) ?? []
}

/// A fresh store with one feed tagged `download` whose one enclosure is token's media URL.
func prepare(_ name: String, token: String, file: URL) throws -> (store: String, directory: String) {
    let directory = work.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    control(token, "file=\(file.path)")
    let url = server.url("/media/file.bin").absoluteString + "?token=\(token)"
    let feed = """
        <?xml version="1.0"?><rss version="2.0"><channel><title>Bench</title><link>http://127.0.0.1/</link>
        <item><title>One</title><guid>one</guid><enclosure url="\(url)" type="application/octet-stream"/></item></channel></rss>
        """
    try Data(feed.utf8).write(to: directory.appendingPathComponent("feed.xml"))
    try Data("\(directory.path)/feed.xml download\n".utf8).write(to: directory.appendingPathComponent("list.txt"))
    let store = directory.appendingPathComponent("store.sqlite").path
    let ingest = try Spawn.run(feedingest, [directory.appendingPathComponent("list.txt").path, "--store", store, "--quiet"], discardsOutput: true)
    guard ingest.exitStatus == 0 else { fail("ingest failed") }
    return (store, directory.appendingPathComponent("media").path)
}

struct Measure {
    var seconds = Double.infinity
    var rssKiB = 0
}

var curl = Measure(), whole = Measure(), smallRun = Measure()
for round in 0..<options.rounds {
    let token = "curl-\(round)"
    control(token, "file=\(big.path)")
    let target = work.appendingPathComponent("curl-\(round).bin").path
    let run = try Spawn.run("/usr/bin/curl", ["-s", "-o", target, server.url("/media/file.bin").absoluteString + "?token=\(token)"], discardsOutput: true)
    guard run.exitStatus == 0, size(target) == Int64(total) else { fail("curl failed") }
    curl.seconds = min(curl.seconds, run.wallSeconds)
    curl.rssKiB = max(curl.rssKiB, run.maxRSSKiB)
    try? FileManager.default.removeItem(atPath: target)

    let (store, directory) = try prepare("whole-\(round)", token: "whole-\(round)", file: big)
    let download = try Spawn.run(feedingest, ["download", "--store", store, "--dir", directory, "--quiet"], discardsOutput: true)
    let file = directory + "/Bench/file.bin"
    guard download.exitStatus == 0, size(file) == Int64(total) else { fail("feedingest download failed (\(download.exitStatus))") }
    if round == 0, sha256(file) != bigSHA { fail("the downloaded file differs from the source") }
    whole.seconds = min(whole.seconds, download.wallSeconds)
    whole.rssKiB = max(whole.rssKiB, download.maxRSSKiB)
    try? FileManager.default.removeItem(atPath: file)

    let (smallStore, smallDirectory) = try prepare("small-\(round)", token: "small-\(round)", file: small)
    let smallDownload = try Spawn.run(feedingest, ["download", "--store", smallStore, "--dir", smallDirectory, "--quiet"], discardsOutput: true)
    guard smallDownload.exitStatus == 0 else { fail("the small download failed") }
    smallRun.seconds = min(smallRun.seconds, smallDownload.wallSeconds)
    smallRun.rssKiB = max(smallRun.rssKiB, smallDownload.maxRSSKiB)
}

// The resume: killed at half, rerun.
let (store, directory) = try prepare("resume", token: "resume", file: big)
let partial = directory + "/Bench/file.bin.download"
let rate = max(1, total / 4)  // about 4 s for the whole file: the kill lands near the middle
let killed = try ChildProcess(feedingest, ["download", "--store", store, "--dir", directory, "--quiet", "--max-rate", String(rate)])
let deadline = Date().addingTimeInterval(60)
while size(partial) < Int64(total / 2) && Date() < deadline && killed.isRunning { Thread.sleep(forTimeInterval: 0.005) }
killed.kill(SIGKILL)
_ = killed.waitUntilExit()
let killedAt = size(partial)
let listed = try ChildProcess.run(feedingest, ["downloads", "--json", "--store", store])
let row = (try? JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [String: Any]) ?? [:]
let committed = Int64(row["bytes"] as? Int ?? -1)
let resume = try Spawn.run(feedingest, ["download", "--store", store, "--dir", directory, "--quiet"], discardsOutput: true)
let resumedFile = directory + "/Bench/file.bin"
guard resume.exitStatus == 0, size(resumedFile) == Int64(total) else { fail("the resumed download failed (\(resume.exitStatus))") }
let resumedSHA = sha256(resumedFile)
let requests = log("resume")
guard requests.count == 2, let start = requests[1]["start"] as? Int, let sent = requests[1]["sent"] as? Int else {
    fail("expected two requests in the server's log, got \(requests)")
}
let refetchedBelowKill = killedAt - Int64(start)

func mb(_ bytes: Int64) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }
func mib(_ kib: Int) -> String { String(format: "%.1f MiB", Double(kib) / 1024) }
let mbps = { (seconds: Double) in String(format: "%.0f MB/s", Double(total) / 1e6 / seconds) }

print("Enclosure download over loopback, \(options.megabytes) MB of random bytes, best of \(options.rounds):")
print("  curl -o FILE (baseline)        \(String(format: "%6.2f s", curl.seconds))  \(mbps(curl.seconds))  peak RSS \(mib(curl.rssKiB))")
print("  feedingest download            \(String(format: "%6.2f s", whole.seconds))  \(mbps(whole.seconds))  peak RSS \(mib(whole.rssKiB))"
      + String(format: "  %.2fx curl", whole.seconds / curl.seconds))
print("  feedingest download, 2 MB file \(String(format: "%6.2f s", smallRun.seconds))  peak RSS \(mib(smallRun.rssKiB))")
print("Resume after SIGKILL at half (--max-rate \(rate) B/s for the first run):")
print("  killed with \(mb(killedAt)) on disk; committed offset \(mb(committed)); resumed request started at byte \(start)"
      + " (\(start == committed ? "= committed" : "≠ committed")); \(mb(Int64(sent))) fetched by the rerun")
print("  bytes fetched again below the kill point: \(mb(refetchedBelowKill)) (at most one checkpoint, 4 MiB, plus what was in flight)")
print("  rerun \(String(format: "%.2f s", resume.wallSeconds)), peak RSS \(mib(resume.maxRSSKiB)); SHA-256 \(resumedSHA == bigSHA ? "equals" : "DIFFERS FROM") the source")

let json: [String: Any] = [
    "bytes": total, "rounds": options.rounds,
    "curl_seconds": curl.seconds, "download_seconds": whole.seconds, "ratio_to_curl": whole.seconds / curl.seconds,
    "curl_rss_kib": curl.rssKiB, "download_rss_kib": whole.rssKiB, "small_download_rss_kib": smallRun.rssKiB,
    "killed_at": killedAt, "committed": committed, "resumed_from": start, "rerun_bytes": sent,
    "refetched_below_kill": refetchedBelowKill, "resume_rss_kib": resume.maxRSSKiB, "sha256_equal": resumedSHA == bigSHA,
    "resumed_below_committed": Int64(start) < committed,
]
let data = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
print("DOWNLOAD_BENCH_JSON " + String(decoding: data, as: UTF8.self))
if resumedSHA != bigSHA || Int64(start) < committed { exit(1) }
