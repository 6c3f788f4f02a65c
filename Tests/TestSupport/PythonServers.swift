import Foundation

/// `scripts/fault_server.py` on 127.0.0.1: misbehaving responses for the Fetch and command tests (resets, stalls,
/// drips, lying lengths, 429/503/410, redirect chains and loops, a gzip bomb, corrupt gzip, held requests, …; the
/// script's docstring lists every path). It exits with this process, or when this object goes away.
public final class FaultServer: Sendable {
    /// Its port on 127.0.0.1.
    public let port: Int
    private let child: ChildProcess

    /// One server for the whole test process, started on first use; tests keep apart with their own `token`.
    public static let shared: Result<FaultServer, TestSupportError> = {
        do { return .success(try FaultServer()) } catch {
            return .failure(TestSupportError("the fault server did not start: \(error)"))
        }
    }()

    /// Starts a server of its own.
    public init() throws {
        child = try ChildProcess(pythonScript: Paths.script("fault_server.py"), [])
        let line = try child.readLine(startingWith: "PORT ")
        guard let port = Int(line.dropFirst(5)) else { throw TestSupportError("the fault server said '\(line)'") }
        self.port = port
    }

    /// `http://127.0.0.1:<port><path>`.
    public func url(_ path: String) -> URL {
        Loopback.url(port: port, path)
    }

    /// The server's counters for one token.
    public struct Stats: Decodable, Sendable {
        /// Requests seen.
        public let requests: Int
        /// Connections opened.
        public let connections: Int
        /// Requests waiting for a release now.
        public let held: Int
        /// The most waiting at once.
        public let peak_held: Int
    }

    /// The counters of `token`.
    public func stats(_ token: String) throws -> Stats {
        try JSONDecoder().decode(Stats.self, from: Loopback.get(port: port, "/stats?token=\(token)").body)
    }

    /// Lets the waiting scenarios of `token` go on.
    public func release(_ token: String) throws {
        _ = try Loopback.get(port: port, "/release?token=\(token)")
    }
}

/// `scripts/latency_server.py` on 127.0.0.1: small feeds over several ports, every response `delay` seconds late,
/// counting the requests in flight (in all and per port). The latency benchmark's 1,000 feeds are
/// `/feeds/N.xml`; `/items/COUNT/NAME` is a COUNT-item feed named by its path; `/redirect/PORT/PATH` redirects to
/// `PATH` on another of its ports; with `root`, other paths are that directory's files (a slow static server).
/// It exits with this process, or when this object goes away.
public final class FeedServer: Sendable {
    /// The ports, one per simulated host.
    public let ports: [Int]
    /// The URLs of the generated feeds `/feeds/0.xml` … (spread over the ports).
    public let feedURLs: [URL]
    private let child: ChildProcess

    /// What the server counted since it started or since the last reset.
    public struct Stats: Decodable, Sendable {
        /// Requests seen (`/stats` aside).
        public var requests: Int
        /// The most requests waiting or being answered at once, across all ports.
        public var max_in_flight: Int
        /// The most at once on one port.
        public var max_in_flight_per_port: Int
        /// Generated feeds requested more than once.
        public var repeated: Int?
        /// 304 answers.
        public var not_modified: Int?
    }

    private struct Ready: Decodable {
        var ports: [Int]
        var urls: [String]
    }

    /// Starts the server.
    /// - Parameters:
    ///   - feeds: how many generated feeds `/feeds/N.xml` it serves (5 items each).
    ///   - ports: how many ports (hosts) it listens on.
    ///   - delay: seconds every response waits.
    ///   - root: a directory whose files it serves too.
    ///   - notModified: the percentage of generated feeds that answer a matching `If-None-Match` with 304.
    public init(feeds: Int = 0, ports: Int = 1, delay: Double = 0, root: URL? = nil, notModified: Int = 0) throws {
        var arguments = ["--feeds", String(feeds), "--ports", String(ports), "--delay", String(delay),
                         "--not-modified", String(notModified)]
        if let root { arguments += ["--root", root.path] }
        child = try ChildProcess(pythonScript: Paths.script("latency_server.py"), arguments)
        // The first line says where it listens (it binds before it prints).
        let line = child.readLine() ?? ""
        guard let ready = try? JSONDecoder().decode(Ready.self, from: Data(line.utf8)), ready.ports.count == ports else {
            throw TestSupportError("the feed server did not start: \(line)")
        }
        self.ports = ready.ports
        feedURLs = ready.urls.compactMap(URL.init(string:))
    }

    /// The first port.
    public var port: Int { ports[0] }

    /// `http://127.0.0.1:<port><path>` on the first port.
    public func url(_ path: String) -> URL {
        Loopback.url(port: ports[0], path)
    }

    /// The counters; with `reset`, they start again from zero after this read.
    public func stats(reset: Bool = false) throws -> Stats {
        try JSONDecoder().decode(Stats.self, from: Loopback.get(port: ports[0], reset ? "/stats?reset=1" : "/stats").body)
    }

    /// Stops the server now (else it stops when this object goes away, or with this process).
    public func stop() {
        child.stop()
    }
}
