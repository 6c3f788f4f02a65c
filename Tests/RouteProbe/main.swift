// RouteProbe: a test-only child process. It starts a RouteMonitor and prints one line per routing-table snapshot:
// `routes N` at start and after every change (N default routes). The Reachability tests run it in a network namespace
// of its own and change that namespace's routes under it. `netlink-unavailable: REASON` if the monitor cannot start.
import Foundation
import Reachability

/// One line on stdout at once (write(2): nothing buffered that a parent reading line by line would wait for).
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

do {
    let monitor = try RouteMonitor(settle: .milliseconds(100)) { snapshot in
        say("routes \(snapshot.defaultRoutes)")
    }
    say("routes \(monitor.snapshot.defaultRoutes)")
    // Ends when the test closes stdin (or dies).
    while let line = readLine() { if line == "quit" { break } }
    monitor.stop()
} catch {
    say("netlink-unavailable: \(error)")
    exit(1)
}
