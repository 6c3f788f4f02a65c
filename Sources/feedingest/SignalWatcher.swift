import Dispatch
import Foundation
import Support

/// SIGINT and SIGTERM for a command, and SIGHUP when it asks: the first SIGINT or SIGTERM runs the command's graceful
/// stop, a second exits at once with status 128 + the signal; every SIGHUP runs its hang-up action.
///
/// While it watches, the signals are delivered through dispatch sources on a queue of their own (their default actions
/// are ignored), so the handlers may take locks and write; ``stop()`` gives the default actions back.
final class SignalWatcher {
    /// The first SIGINT or SIGTERM received; shared with the handlers.
    private final class First: Sendable {
        let signal = Lock<Int32?>(nil)
    }

    private let numbers: [Int32]
    private let sources: [any DispatchSourceSignal]
    private let first = First()

    /// The first SIGINT or SIGTERM received, if any.
    var received: Int32? { first.signal.withLock { $0 } }

    /// Watches SIGINT and SIGTERM, whose first runs `onFirst` with the signal's number, and SIGHUP when `onHangUp` is
    /// given.
    init(onFirst: @escaping @Sendable (_ signal: Int32) -> Void, onHangUp: (@Sendable () -> Void)? = nil) {
        let queue = DispatchQueue(label: "feedingest.signals")
        numbers = [SIGINT, SIGTERM] + (onHangUp == nil ? [] : [SIGHUP])
        var sources: [any DispatchSourceSignal] = []
        for number in numbers {
            signal(number, SIG_IGN)  // delivered through the dispatch source instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            if number == SIGHUP, let onHangUp {
                source.setEventHandler { onHangUp() }
            } else {
                source.setEventHandler { [first] in
                    let again = first.signal.withLock { received -> Bool in
                        if received != nil { return true }
                        received = number
                        return false
                    }
                    if again { _exit(128 + number) }
                    onFirst(number)
                }
            }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    /// Stops watching: the signals' default actions return, and the handlers (which hold what they stop) are released.
    func stop() {
        for source in sources { source.cancel() }
        for number in numbers { signal(number, SIG_DFL) }
    }

    /// Says on stderr what the first signal does, over the progress line on a terminal rather than after it.
    static func announce(_ text: String) {
        let clear = isatty(2) == 1 ? "\r\u{1B}[K" : ""
        StandardStreams.error.write(clear + text + "\n")
    }
}
