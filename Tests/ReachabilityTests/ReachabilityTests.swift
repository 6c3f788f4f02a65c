import Foundation
import Reachability
import TestSupport
import Testing

@Suite("Reachability: the verdict from routes, transfers and clock jumps")
struct ReachabilityStateTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }

    @Test func noDefaultRouteIsOfflineAtOnceAndItsReturnIsDebounced() {
        var state = ReachabilityState(routeKnown: true)
        #expect(state.isOnline(at: Self.t0))
        state.routeChanged(hasDefaultRoute: false, at: Self.at(1))
        #expect(state.offlineReason(at: Self.at(1)) == .noDefaultRoute)
        #expect(state.nextCheck(after: Self.at(1)) == nil, "only a route can bring it back")
        state.routeChanged(hasDefaultRoute: true, at: Self.at(10))
        #expect(!state.isOnline(at: Self.at(11)), "debounced: a flapping route does not resume at once")
        #expect(state.nextCheck(after: Self.at(11)) == Self.at(12))
        #expect(state.isOnline(at: Self.at(12)))
    }

    @Test func failuresToSeveralDistinctHostsPauseAndAnAnswerResumes() {
        var state = ReachabilityState(routeKnown: false)  // no netlink: failures are the only evidence
        state.transferFailedWithoutNetwork(host: "a.example", at: Self.at(0))
        state.transferFailedWithoutNetwork(host: "a.example", at: Self.at(1))
        state.transferFailedWithoutNetwork(host: "b.example", at: Self.at(2))
        #expect(state.isOnline(at: Self.at(2)), "two hosts are not enough; the same host twice counts once")
        state.transferFailedWithoutNetwork(host: "c.example", at: Self.at(3))
        #expect(state.offlineReason(at: Self.at(3)) == .failingHosts(3))
        let probes = [4.0, 10, 35].map { state.takeProbe(at: Self.at($0)) }
        #expect(probes == [true, false, true], "one probe goes through to find out, then not again before the interval")
        state.transferReachedServer(host: "d.example", at: Self.at(36))
        #expect(state.isOnline(at: Self.at(36)))
        let online = state.takeProbe(at: Self.at(37))
        #expect(!online, "no probes while online")
    }

    @Test func oldFailuresAgeOutAndASleepClearsThem() {
        var state = ReachabilityState(routeKnown: true)
        for (index, host) in ["a", "b", "c"].enumerated() { state.transferFailedWithoutNetwork(host: host, at: Self.at(Double(index))) }
        #expect(!state.isOnline(at: Self.at(5)))
        #expect(state.nextCheck(after: Self.at(5)) == Self.at(35), "the probe is due before the oldest failure ages out")
        #expect(state.isOnline(at: Self.at(61)), "failures older than the window do not count")
        state.transferFailedWithoutNetwork(host: "a", at: Self.at(100))
        state.transferFailedWithoutNetwork(host: "b", at: Self.at(100))
        state.transferFailedWithoutNetwork(host: "c", at: Self.at(100))
        #expect(!state.isOnline(at: Self.at(101)))
        state.clockJumped(at: Self.at(102))
        #expect(state.isOnline(at: Self.at(102)), "after a sleep the old failures are old news")
    }

    @Test func aRouteThatReturnsClearsTheFailures() {
        var state = ReachabilityState(routeKnown: true)
        state.routeChanged(hasDefaultRoute: false, at: Self.at(0))
        for host in ["a", "b", "c"] { state.transferFailedWithoutNetwork(host: host, at: Self.at(1)) }
        state.routeChanged(hasDefaultRoute: true, at: Self.at(2))
        #expect(state.isOnline(at: Self.at(4)))
        state.routeUnknown()
        #expect(!state.routeKnown && state.isOnline(at: Self.at(5)), "without netlink it fails open")
    }

    @Test func sleepIsAJumpBetweenBootTimeAndMonotonicTime() {
        var detector = SleepDetector(threshold: 5)
        let base = SleepDetector.bootMinusMonotonic()
        let checks = [base + 0.01, base + 60, base + 60.5].map { detector.sleptSinceLastCheck(offset: $0) }
        #expect(checks == [false, true, false], "a minute asleep, measured from the last check")
        var fresh = SleepDetector(threshold: 5)
        let now = fresh.sleptSinceLastCheck()
        #expect(!now, "this process did not sleep just now")
    }
}

/// The route monitor against a real kernel routing table: RouteProbe runs in a network namespace of its own (the
/// tests already run in one, with loopback only), and the test adds and removes a default route in it with iproute2
/// (a veth pair: this kernel has no dummy links). Nothing leaves the machine: the route leads nowhere.
@Suite("Route monitor, netlink, in a network namespace", .serialized)
struct RouteMonitorTests {
    static func ip(_ pid: Int32, _ arguments: String) throws -> ChildProcess.Finished {
        try ChildProcess.run("/usr/bin/nsenter", ["--net=/proc/\(pid)/ns/net", "ip"] + arguments.split(separator: " ").map(String.init))
    }

    @Test func aDefaultRouteComingAndGoingIsReportedWithinSeconds() throws {
        let probe = try #require(Paths.builtExecutable("RouteProbe"))
        let child = try ChildProcess("/usr/bin/unshare", ["-n", "--", probe.path], opensStandardInput: true)
        defer { child.stop() }
        let pid = child.processIdentifier
        #expect(child.readLine() == "routes 0", "a fresh namespace has no default route")

        #expect(try Self.ip(pid, "link set lo up").status == 0)
        #expect(try Self.ip(pid, "link add v0 type veth peer name v1").status == 0)
        #expect(try Self.ip(pid, "link set v0 up").status == 0)
        #expect(try Self.ip(pid, "link set v1 up").status == 0)
        let started = ContinuousClock.now
        let added = try Self.ip(pid, "route add default dev v0")
        #expect(added.status == 0, "\(added.standardError)")
        #expect(child.readLine() == "routes 1")
        #expect(ContinuousClock.now - started < .seconds(5), "reported within seconds")

        #expect(try Self.ip(pid, "-6 route add default dev v0").status == 0)
        #expect(child.readLine() == "routes 2", "an IPv6 default route counts too")
        #expect(try Self.ip(pid, "route del default dev v0").status == 0)
        #expect(try Self.ip(pid, "-6 route del default dev v0").status == 0)
        // One or two changes, depending on whether the two deletions fall in one settle window.
        var last = child.readLine()
        if last == "routes 1" { last = child.readLine() }
        #expect(last == "routes 0")
        child.closeStandardInput()
        #expect(child.waitUntilExit() == 0)
    }
}
