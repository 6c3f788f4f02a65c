// The one file of Reachability that calls libmnl and the netlink socket API (NETLINK_ROUTE): it reads whether the
// routing table has a default route, and hears when routes, links or addresses change.
import CNetlink
import Foundation
import Support

/// Why the route monitor could not start or read the routing table: the call, the `errno` and its text.
public struct NetlinkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The failing call (`mnl_socket_open`, `mnl_socket_bind`, `mnl_socket_recvfrom`, ...).
    public var call: String
    /// The `errno` the call left.
    public var code: Int32

    /// `call failed: strerror (errno N)`.
    public var description: String { "\(call) failed: \(String(cString: strerror(code))) (errno \(code))" }
}

/// What the routing table says: how many default routes it has (IPv4 and IPv6, main table, unicast).
public struct RouteSnapshot: Sendable, Hashable {
    /// Default routes (`0.0.0.0/0`, `::/0`) in the main table.
    public var defaultRoutes: Int
    /// Whether there is at least one.
    public var hasDefaultRoute: Bool { defaultRoutes > 0 }
}

/// One netlink socket (`struct mnl_socket *`), closed when released. Used by one thread at a time.
final class NetlinkSocket {
    private let handle: OpaquePointer
    private var sequence: UInt32 = UInt32(truncatingIfNeeded: time(nil))
    private var buffer = [UInt8](repeating: 0, count: CNetlink_socket_buffer_size())

    /// Opens a `NETLINK_ROUTE` socket bound to `groups` (0: none, for requests only).
    init(groups: UInt32) throws(NetlinkError) {
        guard let opened = mnl_socket_open(NETLINK_ROUTE) else { throw NetlinkError(call: "mnl_socket_open", code: errno) }
        guard mnl_socket_bind(opened, groups, pid_t(CNetlink_MNL_SOCKET_AUTOPID)) >= 0 else {
            let code = errno
            mnl_socket_close(opened)
            throw NetlinkError(call: "mnl_socket_bind", code: code)
        }
        handle = opened
    }

    deinit { mnl_socket_close(handle) }

    /// The socket's file descriptor, for `poll(2)`.
    var descriptor: Int32 { mnl_socket_get_fd(handle) }

    /// Dumps the routing table (`RTM_GETROUTE` with `NLM_F_DUMP`, both address families) and counts the default routes.
    func readRoutes() throws(NetlinkError) -> RouteSnapshot {
        sequence &+= 1
        let seq = sequence
        var request = [UInt8](repeating: 0, count: 256)
        let sent = request.withUnsafeMutableBytes { raw -> Int in
            let header = mnl_nlmsg_put_header(raw.baseAddress)!
            header.pointee.nlmsg_type = UInt16(RTM_GETROUTE)
            header.pointee.nlmsg_flags = CNetlink_NLM_F_REQUEST | CNetlink_NLM_F_DUMP
            header.pointee.nlmsg_seq = seq
            let message = mnl_nlmsg_put_extra_header(header, MemoryLayout<rtmsg>.size)!.assumingMemoryBound(to: rtmsg.self)
            message.pointee.rtm_family = UInt8(AF_UNSPEC)
            return mnl_socket_sendto(handle, header, Int(header.pointee.nlmsg_len))
        }
        guard sent >= 0 else { throw NetlinkError(call: "mnl_socket_sendto", code: errno) }
        let portID = mnl_socket_get_portid(handle)
        var count = 0
        while true {
            let received = try receive()
            var done = false
            var failure: NetlinkError?
            buffer.withUnsafeBytes { raw in
                var remaining = Int32(received)
                var header = raw.baseAddress!.assumingMemoryBound(to: nlmsghdr.self)
                while mnl_nlmsg_ok(header, remaining) {
                    guard mnl_nlmsg_seq_ok(header, seq), mnl_nlmsg_portid_ok(header, portID) else {
                        header = UnsafePointer(mnl_nlmsg_next(header, &remaining)!)
                        continue
                    }
                    switch Int32(header.pointee.nlmsg_type) {
                    case NLMSG_DONE:
                        done = true
                    case NLMSG_ERROR:
                        let code = mnl_nlmsg_get_payload(header)!.assumingMemoryBound(to: nlmsgerr.self).pointee.error
                        if code != 0 { failure = NetlinkError(call: "RTM_GETROUTE", code: -code) }
                        done = true
                    case Int32(RTM_NEWROUTE):
                        if Self.isDefaultRoute(header) { count += 1 }
                    default:
                        break
                    }
                    header = UnsafePointer(mnl_nlmsg_next(header, &remaining)!)
                }
            }
            if let failure { throw failure }
            if done { return RouteSnapshot(defaultRoutes: count) }
        }
    }

    /// Reads and drops whatever notifications wait (the caller then re-reads the table); `false` when none did.
    func drainNotifications() throws(NetlinkError) -> Bool {
        var any = false
        while true {
            let received = Errno.retryingInterrupts {
                buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            }
            if received > 0 {
                any = true
                continue
            }
            if received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return any }
            // ENOBUFS: the kernel dropped notifications because we were slow; the caller re-reads the table anyway.
            if received < 0 && errno == ENOBUFS { return true }
            if received < 0 { throw NetlinkError(call: "recv", code: errno) }
            return any
        }
    }

    private func receive() throws(NetlinkError) -> Int {
        let received = Errno.retryingInterrupts { buffer.withUnsafeMutableBytes { mnl_socket_recvfrom(handle, $0.baseAddress, $0.count) } }
        if received >= 0 { return received }
        throw NetlinkError(call: "mnl_socket_recvfrom", code: errno)
    }

    /// Whether a `RTM_NEWROUTE` message is a default route of the main table: destination length 0, unicast, table
    /// `RT_TABLE_MAIN` (from `RTA_TABLE` when present, which tables above 255 need).
    private static func isDefaultRoute(_ header: UnsafePointer<nlmsghdr>) -> Bool {
        let message = mnl_nlmsg_get_payload(header)!.assumingMemoryBound(to: rtmsg.self).pointee
        guard message.rtm_dst_len == 0, message.rtm_type == UInt8(RTN_UNICAST) else { return false }
        var table = UInt32(message.rtm_table)
        let tail = UnsafeRawPointer(mnl_nlmsg_get_payload_tail(header)!)
        var attribute = UnsafeRawPointer(mnl_nlmsg_get_payload_offset(header, MemoryLayout<rtmsg>.size)!)
            .assumingMemoryBound(to: nlattr.self)
        while mnl_attr_ok(attribute, Int32(tail - UnsafeRawPointer(attribute))) {
            if mnl_attr_get_type(attribute) == UInt16(RTA_TABLE.rawValue) { table = mnl_attr_get_u32(attribute) }
            attribute = UnsafePointer(mnl_attr_next(attribute)!)
        }
        return table == UInt32(RT_TABLE_MAIN.rawValue)
    }
}

/// Watches the routing table on a thread of its own and reports each change of ``RouteSnapshot``.
///
/// It listens to the route, link and address groups of `NETLINK_ROUTE`; after each burst of notifications it waits a
/// little (``settle``, so an interface that comes up with several routes is one change) and re-reads the table. The
/// callback runs on the monitor's thread; it must not block for long.
public final class RouteMonitor: Sendable {
    /// How long after a notification the table is re-read.
    public let settle: Duration
    private let current: SnapshotBox
    private let stopPipe: (read: Int32, write: Int32)
    private let done = DispatchSemaphore(value: 0)

    /// The routing table as last read.
    public var snapshot: RouteSnapshot { current.value.withLock { $0 } }

    /// Opens the sockets, reads the table once and starts watching; `onChange` hears every later change.
    ///
    /// - Throws: ``NetlinkError`` when netlink is not available (a sandbox without it, say): the caller then runs
    ///   without route information, failing open.
    public init(settle: Duration = .milliseconds(300), onChange: @escaping @Sendable (RouteSnapshot) -> Void) throws(NetlinkError) {
        self.settle = settle
        let events = try NetlinkSocket(groups: CNetlink_route_groups)
        let requests = try NetlinkSocket(groups: 0)
        let initial = try requests.readRoutes()
        current = SnapshotBox(initial)
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw NetlinkError(call: "pipe", code: errno) }
        stopPipe = (ends[0], ends[1])
        let sockets = SocketHandOver(events: events, requests: requests)
        let thread = Thread { [current, stopPipe, done, settle] in
            defer { done.signal() }
            let watched = sockets  // the sockets belong to this thread from here on
            var descriptors = [pollfd(fd: watched.events.descriptor, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
            while true {
                let ready = Errno.retryingInterrupts { poll(&descriptors, 2, -1) }
                if ready < 0 || descriptors[1].revents != 0 { return }
                guard (try? watched.events.drainNotifications()) == true else { continue }
                // Let a burst settle, drop what it added, then read the table once.
                usleep(useconds_t(max(settle.seconds, 0) * 1e6))
                _ = try? watched.events.drainNotifications()
                guard let snapshot = try? watched.requests.readRoutes() else { continue }
                let changed = current.value.withLock { old -> Bool in
                    defer { old = snapshot }
                    return old != snapshot
                }
                if changed { onChange(snapshot) }
            }
        }
        thread.name = "feedingest.routes"
        thread.start()
    }

    /// Stops watching and waits for the thread to end. Idempotent.
    public func stop() {
        var byte: UInt8 = 1
        guard write(stopPipe.write, &byte, 1) == 1 else { return }
        done.wait()
        done.signal()  // a later stop() returns at once
    }

    deinit {
        stop()
        close(stopPipe.read)
        close(stopPipe.write)
    }
}

/// The last snapshot, shared by the monitor and its thread.
private final class SnapshotBox: Sendable {
    let value: Lock<RouteSnapshot>
    init(_ snapshot: RouteSnapshot) { value = Lock(snapshot) }
}

/// The two sockets, handed from the thread that opened them to the monitor's thread, which alone uses them after.
/// `@unchecked Sendable`: the opening thread lets go of them when it starts the monitor's thread (happens-before
/// through `Thread.start`), so they are never used by two threads.
private final class SocketHandOver: @unchecked Sendable {
    let events: NetlinkSocket
    let requests: NetlinkSocket

    init(events: NetlinkSocket, requests: NetlinkSocket) {
        self.events = events
        self.requests = requests
    }
}
