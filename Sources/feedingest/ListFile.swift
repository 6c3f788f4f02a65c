import ArticleStore
import Foundation
import Ingest

/// A feed list named on the command line (`FEEDS`, `--from`): read with one clear error, and the subscription source it
/// is in the store.
enum ListFile {
    /// Reads the list at `path` (`-` for stdin), or says on stderr why it cannot and returns `nil` (the command exits
    /// 2): an unreadable file, or a feed where a list was expected, with the commands that read a feed instead.
    static func load(_ path: String) -> FeedList? {
        do {
            return try FeedList.load(path: path)
        } catch let error as FeedListError {
            let name = path == "-" ? "stdin" : path
            var line = "feedingest: \(name): \(error)"
            if path != "-" {
                line += " (to read it: 'feedingest parse \(path)'; to store its articles: 'echo \(path) | feedingest -')"
            } else {
                line += " (to read it: 'feedingest parse -')"
            }
            StandardStreams.error.write(line + "\n")
            return nil
        } catch {
            StandardStreams.error.write("feedingest: cannot read the feed list \(path): \(reason(error))\n")
            return nil
        }
    }

    /// Who the list's feeds are subscribed by: the file, by its absolute path, which owns them from then on (a line it
    /// drops is unsubscribed); standard input subscribes without removing anything.
    static func source(of path: String) -> SubscriptionSource {
        guard path != "-" else { return .oneOff }
        return .list(URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path)
    }

    /// Why a file could not be read, in a few words.
    static func reason(_ error: any Error) -> String {
        if let error = error as? CocoaError, let underlying = error.userInfo[NSUnderlyingErrorKey] as? POSIXError {
            return String(cString: strerror(underlying.code.rawValue))
        }
        if let error = error as? CocoaError, error.code == .fileReadNoSuchFile { return "no such file" }
        return error.localizedDescription
    }
}
