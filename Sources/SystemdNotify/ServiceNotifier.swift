// The one file that calls libsystemd: sd_notify(3) and sd_watchdog_enabled(3).
import CSystemd
import Foundation

/// Tells systemd how a `Type=notify` service is doing: ready, stopping, a status line, watchdog keep-alives.
///
/// Outside systemd (no `NOTIFY_SOCKET` in the environment) every call does nothing and says so by returning `false`,
/// so a service calls it unconditionally. A failed notification is reported, never fatal: a service must not stop
/// because its supervisor cannot hear it.
public struct ServiceNotifier: Sendable {
    /// Whether systemd listens (`NOTIFY_SOCKET` is set).
    public var isSupervised: Bool { ProcessInfo.processInfo.environment["NOTIFY_SOCKET"] != nil }

    /// The watchdog interval systemd expects keep-alives within (`WATCHDOG_USEC`, when meant for this process);
    /// `nil` without a watchdog. Send ``watchdog()`` at least twice per interval.
    public let watchdogInterval: Duration?

    /// Reads the watchdog settings of this process's environment.
    public init() {
        var microseconds: UInt64 = 0
        let enabled = sd_watchdog_enabled(0, &microseconds)
        watchdogInterval = enabled > 0 && microseconds > 0 ? .microseconds(Int64(microseconds)) : nil
    }

    /// A notification systemd could not be sent: `sd_notify`'s negative errno.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The `errno`.
        public var code: Int32
        /// `sd_notify failed: strerror (errno N)`.
        public var description: String { "sd_notify failed: \(String(cString: strerror(code))) (errno \(code))" }
    }

    /// `READY=1`, and a status line.
    @discardableResult
    public func ready(status: String? = nil) throws(Failure) -> Bool {
        try send(["READY=1"] + (status.map { ["STATUS=\($0)"] } ?? []))
    }

    /// `STOPPING=1`, and a status line.
    @discardableResult
    public func stopping(status: String? = nil) throws(Failure) -> Bool {
        try send(["STOPPING=1"] + (status.map { ["STATUS=\($0)"] } ?? []))
    }

    /// `STATUS=…`: one line for `systemctl status` (newlines become spaces).
    @discardableResult
    public func status(_ text: String) throws(Failure) -> Bool {
        try send(["STATUS=\(text)"])
    }

    /// `WATCHDOG=1`: the service is alive.
    @discardableResult
    public func watchdog() throws(Failure) -> Bool {
        try send(["WATCHDOG=1"])
    }

    /// Sends `assignments` (one `KEY=value` a line); `false` when not supervised.
    private func send(_ assignments: [String]) throws(Failure) -> Bool {
        let text = assignments.map { $0.replacingOccurrences(of: "\n", with: " ") }.joined(separator: "\n")
        let result = sd_notify(0, text)
        if result < 0 { throw Failure(code: -result) }
        return result > 0
    }
}
