import Downloads
import Foundation

/// The download options `download` and `watch --download` share: where files go, how many at once, how fast, which
/// media types, their names, retention, checkpoints and attempts, and the ``DownloadConfiguration`` they make. The
/// number of downloads at once is `--jobs` for `download` and `--download-jobs` for `watch`.
struct DownloadOptions: Sendable {
    static let directory = ValueOption<String>(
        "--dir", "DIR", .text,
        help: "where files go (default: $FEEDINGEST_DOWNLOADS, else $XDG_DATA_HOME/feedingest/downloads, else "
            + "~/.local/share/feedingest/downloads)")
    static let maximumRate = ValueOption<Int64>(
        "--max-rate", "RATE", .size("bytes per second", hint: "for example 500k, 2M or 100000", allowsRate: true),
        help: "at most RATE bytes per second per download: a number with k, M or G (1024-based), e.g. 500k")
    static let mediaTypes = ValueOption<[String]>(
        "--types", "TYPES", .mediaTypes,
        help: "only these media types, comma-separated, with wildcards: audio/*,video/mp4 (default: all)")
    static let naming = ValueOption<DownloadNaming>(
        "--name", "TEMPLATE", .naming,
        help: "the path under DIR (default {feed}/{file}); placeholders {feed}, {file}, {title}, {date} (YYYY-MM-DD), "
            + "{ext}; e.g. '{feed}/{date} {title}.{ext}'")
    static let keep = ValueOption<Int>(
        "--keep", "N", .count(of: "files", atLeast: 1),
        help: "keep the newest N completed files per feed (older ones are deleted; only the newest N enclosures of a "
            + "feed are queued)")
    static let keepDays = ValueOption<Double>(
        "--keep-days", "D", .days, help: "delete completed files of articles older than D days (and queue none older)")
    static let checkpoint = ValueOption<Int64>(
        "--checkpoint", "SIZE", .size("a size of 4096 bytes or more", hint: "for example 4M", atLeast: 4096, allowsRate: true),
        help: "flush the partial file and record its length every SIZE bytes (default 4M): what a kill can lose at most")
    static let attempts = ValueOption<Int>(
        "--attempts", "N", .number(in: 1...100),
        help: "tries per download and run when a transfer breaks off (a reset, a timeout): each resumes where the last "
            + "left off (default 3)")

    /// The options both commands take under the same names, in help order.
    static let shared: [any OptionDeclaration] = [directory, maximumRate, mediaTypes, naming, keep, keepDays, checkpoint, attempts]

    /// The number of downloads at once, under the command's name for it.
    let jobs: ValueOption<Int>

    /// The group with the number of downloads at once called `jobs` and described by `help`.
    init(jobs name: String, help: String) {
        jobs = ValueOption(name, "N", .number(in: 1...64), help: help)
    }

    /// The options, in help order.
    var all: [any OptionDeclaration] { [Self.directory, jobs] + Self.shared.dropFirst() }

    /// The first of these options `arguments` give (the shared ones in name order, then ``jobs``), if any.
    func firstGiven(in arguments: Arguments) -> Option? {
        (Self.shared.map(\.option).sorted { $0.name < $1.name } + [jobs.option]).first { arguments.contains($0) }
    }

    /// The download configuration `arguments` ask for: files under `--dir` (relative to the current directory), else
    /// the default directory; the defaults of ``DownloadConfiguration`` for the options not given.
    func configuration(_ arguments: Arguments) throws(UsageError) -> DownloadConfiguration {
        var configuration = DownloadConfiguration(directory: arguments.text(Self.directory) ?? DownloadConfiguration.defaultDirectory())
        if !configuration.directory.hasPrefix("/") {
            configuration.directory = FileManager.default.currentDirectoryPath + "/" + configuration.directory
        }
        if let jobs = try arguments.value(jobs) { configuration.jobs = jobs }
        if let rate = try arguments.value(Self.maximumRate) { configuration.maximumReceiveRate = rate }
        if let types = try arguments.value(Self.mediaTypes) { configuration.mediaTypes = types }
        if let attempts = try arguments.value(Self.attempts) { configuration.attemptsPerRun = attempts }
        if let size = try arguments.value(Self.checkpoint) { configuration.checkpointInterval = size }
        if let naming = try arguments.value(Self.naming) { configuration.naming = naming }
        if let keep = try arguments.value(Self.keep) { configuration.keepPerFeed = keep }
        if let days = try arguments.value(Self.keepDays) { configuration.keepDays = days }
        return configuration
    }
}
