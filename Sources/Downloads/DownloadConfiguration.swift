import Foundation

/// How a ``DownloadManager`` downloads: where files go, how many at once, how fast, which types, names and retention.
///
/// Every value has a documented default; all can be changed.
public struct DownloadConfiguration: Sendable, Hashable {
    /// The directory files go into, as `DIRECTORY/<feed folder>/<file>` (see ``naming``).
    public var directory: String
    /// Downloads at once. Default 2.
    public var jobs: Int = 2
    /// At most this many bytes per second per download (libcurl's `CURLOPT_MAX_RECV_SPEED_LARGE`); `nil` for no limit.
    public var maximumReceiveRate: Int64?
    /// Media type patterns to download (`audio/*`, `video/mp4`); an enclosure without a type matches only when this is
    /// empty. Empty (the default) takes every type.
    public var mediaTypes: [String] = []
    /// How files are named.
    public var naming = DownloadNaming()
    /// Keep at most this many completed files per feed (the newest articles'); older ones are deleted, and only the
    /// newest this many enclosures of a feed are queued. `nil` (the default) keeps all.
    public var keepPerFeed: Int?
    /// Delete completed files of articles older than this many days, and queue none older. `nil` (the default) keeps all.
    public var keepDays: Double?
    /// Flush the partial file and record the committed offset after this many new bytes. Default 4 MiB: a kill loses
    /// at most that much, and the store sees one write per 4 MiB.
    public var checkpointInterval: Int64 = 4 << 20
    /// How long a claim on a download lasts unless renewed (it is renewed while bytes flow). Default 60 s.
    public var leaseDuration: Duration = .seconds(60)
    /// The largest file accepted. Default 64 GiB.
    public var maximumFileBytes: Int64 = 64 << 30
    /// Attempts per download and run: a reset or a timeout mid-body is resumed at once, up to this many times in all.
    /// Default 3.
    public var attemptsPerRun: Int = 3
    /// The pause before such a retry. Default 0.5 s.
    public var retryDelay: Duration = .milliseconds(500)
    /// How often ``DownloadEvent/progress(_:)`` is reported. Default 0.5 s.
    public var progressInterval: Duration = .milliseconds(500)

    /// A configuration that downloads into `directory`.
    public init(directory: String) {
        self.directory = directory
    }

    /// Whether `mediaType` is wanted by ``mediaTypes``.
    public func wants(mediaType: String?) -> Bool {
        guard !mediaTypes.isEmpty else { return true }
        guard let type = mediaType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased(), !type.isEmpty else {
            return false
        }
        return mediaTypes.contains { pattern in
            let pattern = pattern.trimmingCharacters(in: .whitespaces).lowercased()
            if pattern == "*" || pattern == "*/*" { return true }
            if pattern.hasSuffix("/*") { return type.hasPrefix(String(pattern.dropLast())) }
            return type == pattern
        }
    }

    /// The default directory: `FEEDINGEST_DOWNLOADS` when set, else `$XDG_DATA_HOME/feedingest/downloads`, else
    /// `~/.local/share/feedingest/downloads` (beside the default store: the XDG data directory, since these files are
    /// the user's data, not a cache that may vanish).
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let path = environment["FEEDINGEST_DOWNLOADS"], !path.isEmpty { return path }
        var dataHome = environment["XDG_DATA_HOME"] ?? ""
        if !dataHome.hasPrefix("/") {
            dataHome = (environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()) + "/.local/share"
        }
        return dataHome + "/feedingest/downloads"
    }
}
