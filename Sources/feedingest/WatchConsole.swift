import Foundation
import Support

/// Standard error for a watch: lines for people, written over the status line a terminal shows (the next tick redraws
/// it). Thread-safe: the event queue, the ticker, the signal queue and the list watcher all write.
final class WatchConsole: Sendable {
    /// Whether stderr is a terminal, where the status line is drawn.
    let isTerminal: Bool
    /// Whether only errors are printed (`--quiet`); the status line is not drawn either.
    let quiet: Bool
    /// Whether the status line is on the screen now.
    private let lineShown = Lock(false)

    init(isTerminal: Bool, quiet: Bool) {
        self.isTerminal = isTerminal
        self.quiet = quiet
    }

    /// A line on stderr, over the status line on a terminal (redrawn by the next tick); a message's own line breaks
    /// become spaces, so one message stays one line.
    func line(_ text: String) {
        let text = text.onOneLine
        let clear = lineShown.withLock { shown -> Bool in
            defer { shown = false }
            return shown
        }
        StandardStreams.error.write((clear ? "\r\u{1B}[K" : "") + text + "\n")
        StandardStreams.error.flush()
    }

    /// Draws the status line (terminal only).
    func draw(_ text: String) {
        guard isTerminal, !quiet else { return }
        lineShown.withLock { $0 = true }
        StandardStreams.error.write("\r\u{1B}[K" + text)
        StandardStreams.error.flush()
    }

    /// Clears the status line, if it is shown.
    func clearLine() {
        let shown = lineShown.withLock { shown -> Bool in
            defer { shown = false }
            return shown
        }
        if shown { StandardStreams.error.write("\r\u{1B}[K") }
    }
}
