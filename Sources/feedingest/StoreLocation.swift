import Foundation
import ArticleStore
import Fetch
import PostgresStore
import Support

/// Where the store is, for every command that uses one: `--store`, else `FEEDINGEST_STORE`, else
/// `$XDG_DATA_HOME/feedingest/feedingest.sqlite`, with `~/.local/share` when `XDG_DATA_HOME` is unset or not absolute.
enum StoreLocation {
    /// The store's path. `createsDirectory` makes the default location's directory (ingest, which creates the store);
    /// the reading commands pass `false` and never create anything.
    static func path(option: String?, createsDirectory: Bool) -> String {
        if let option { return option }
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["FEEDINGEST_STORE"], !path.isEmpty { return path }  // a path or a PostgreSQL URI
        var dataHome = environment["XDG_DATA_HOME"] ?? ""
        if !dataHome.hasPrefix("/") {
            dataHome = (environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()) + "/.local/share"
        }
        let directory = dataHome + "/feedingest"
        if createsDirectory, !FileManager.default.fileExists(atPath: directory) {
            // Only its owner may list the store and its log (which hold feed passwords).
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o700])
        }
        return directory + "/feedingest.sqlite"
    }

    /// Opens the store a writing command uses (`--store`, else the default, whose directory is made), or says on
    /// standard error why it cannot (the store named without its password, the engine's hint) and returns nil.
    static func openForWriting(option: String?, configuration: StoreConfiguration) -> Store? {
        let path = self.path(option: option, createsDirectory: true)
        do {
            return try Store.open(path, configuration: configuration)
        } catch {
            var line = cannotUse(Store.displayName(of: path), error)
            if let hint = error.hint, !line.contains(hint) { line += " (\(hint))" }
            StandardStreams.error.write(line + "\n")
            return nil
        }
    }
}

extension StoreLocation {
    /// "feedingest: cannot use the store NAME: why", with NAME once: a `StoreError` of that store names it itself.
    static func cannotUse(_ name: String, _ error: any Error) -> String {
        if let error = error as? StoreError, error.path == name { return "feedingest: cannot use the store \(error)" }
        return "feedingest: cannot use the store \(name): \(error)"
    }

    /// Opens the store of `option` read-only for a reading command, or prints one line on stderr and returns `nil`
    /// (the command exits 2). A missing store is never created, nor its directory.
    static func openForReading(option: String?) -> StoreContext? {
        let path = path(option: option, createsDirectory: false)
        var configuration = StoreConfiguration()
        configuration.access = .readOnly
        if Store.isPostgresURI(path) {
            do {
                return try Store.open(path, configuration: configuration).makeContext()
            } catch {
                // The description names the store without its password and carries the hint.
                StandardStreams.error.write("feedingest: cannot read the store \(error)\n")
                return nil
            }
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            let source = option != nil ? "" : ProcessInfo.processInfo.environment["FEEDINGEST_STORE"].map { $0.isEmpty ? "" : " (from FEEDINGEST_STORE)" } ?? ""
            StandardStreams.error.write("feedingest: no store at \(path)\(source) (ingest a feed list first: 'feedingest FEEDS', or name a store with --store)\n")
            return nil
        }
        guard !isDirectory.boolValue else {
            StandardStreams.error.write("feedingest: cannot read the store \(path): it is a directory\n")
            return nil
        }
        do {
            return try Store(path: path, configuration: configuration).makeContext()
        } catch {
            // The description names the path and carries the hint.
            StandardStreams.error.write("feedingest: cannot read the store \(error)\n")
            return nil
        }
    }

    /// Every feed of the store of `option`, read-only, or `nil` after one line on stderr (the command exits 2).
    static func feedsForReading(option: String?) -> [FeedStatus]? {
        guard let context = openForReading(option: option) else { return nil }
        do {
            return try context.feedStatuses()
        } catch {
            StandardStreams.error.write("feedingest: cannot read the store \(error)\n")
            return nil
        }
    }

    /// How the commands name a feed: its URL as listed, or the path of a local feed (as ingest prints it in the
    /// articles' `feed` field and in its messages), a URL's password replaced by `***`.
    static func displayName(ofFeed url: String) -> String {
        guard url.hasPrefix("file:"), let parsed = URL(string: url), parsed.isFileURL else { return Redaction.redactedURL(url) }
        return parsed.path
    }
}
