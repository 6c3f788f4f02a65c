import Foundation
import Testing

/// Paths the tests need, found from this file: the package root is three levels up, the corpora beside it.
enum Paths {
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let corpus: URL = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")
    static let faultServer: URL = packageRoot.appendingPathComponent("scripts/fault_server.py")
}

struct ServerError: Error, CustomStringConvertible {
    let description: String
}

/// A child process with its output on a pipe and its standard error discarded (an inherited stderr would keep
/// `swift test`'s pipe open after the tests end). Children watch the test process's pid and end when it ends, so no
/// server outlives the tests, however they end.
final class ChildProcess: @unchecked Sendable {
    // @unchecked Sendable: every property is set in init and never changed; Process and Pipe are only read from.
    let process: Process
    let output: Pipe

    init(_ executable: String, _ arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        output = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Reads standard output until a line starting with `prefix`, or end of file.
    func readLine(startingWith prefix: String) throws -> String {
        var buffer = Data()
        while true {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { throw ServerError(description: "the process ended before printing '\(prefix)'") }
            buffer.append(data)
            let text = String(decoding: buffer, as: UTF8.self)
            for line in text.split(separator: "\n") where line.hasPrefix(prefix) { return String(line) }
        }
    }
}

/// This test process's pid, which the servers watch.
let testProcessID = String(getpid())

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
func isListening(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

/// A port on 127.0.0.1 that was free a moment ago (bound to port 0, read back, released).
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw ServerError(description: "socket() failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw ServerError(description: "bind() failed") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The Python fault-injecting server (scripts/fault_server.py), one per test process, shared by all tests; tests
/// keep apart with their own `token`.
final class FaultServer: Sendable {
    let port: Int
    private let child: ChildProcess

    static let shared: Result<FaultServer, ServerError> = {
        do { return .success(try FaultServer()) } catch {
            return .failure(ServerError(description: "fault server did not start: \(error)"))
        }
    }()

    private init() throws {
        child = try ChildProcess("/usr/bin/env", ["python3", Paths.faultServer.path, "--parent", testProcessID])
        let line = try child.readLine(startingWith: "PORT ")
        guard let port = Int(line.dropFirst(5)) else { throw ServerError(description: "bad port line '\(line)'") }
        self.port = port
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    struct Stats: Decodable {
        let requests: Int
        let connections: Int
        let held: Int
        let peak_held: Int
    }

    /// The server's counters for `token`.
    func stats(_ token: String) throws -> Stats {
        try JSONDecoder().decode(Stats.self, from: controlGet("/stats?token=\(token)"))
    }

    /// Lets the waiting scenarios of `token` go on.
    func release(_ token: String) throws {
        _ = try controlGet("/release?token=\(token)")
    }

    /// A plain blocking GET over a socket, for control requests, independent of the code under test.
    private func controlGet(_ path: String) throws -> Data {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError(description: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw ServerError(description: "cannot connect to the fault server") }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else {
            throw ServerError(description: "send() failed")
        }
        var response = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response.append(contentsOf: buffer[0..<count])
        }
        guard let end = response.range(of: Data("\r\n\r\n".utf8)) else { throw ServerError(description: "no response to \(path)") }
        return response[end.upperBound...]
    }
}

/// nginx from Debian, started on 127.0.0.1 with its own configuration, prefix and temp dirs in a temp folder;
/// one per test process. It serves generated feeds at `/feeds/`, the shared corpora at `/corpus/`, and the same
/// feeds rate-limited at `/slow/` (uncompressed at `/plain/`, precompressed `.gz` files at `/static/`), with gzip, ETag/Last-Modified and keep-alive; over TLS with HTTP/2 too, when
/// openssl is there to make a certificate.
final class Nginx: Sendable {
    let port: Int
    let tlsPort: Int?
    let directory: URL
    let certificate: String?
    private let child: ChildProcess

    static let executable: String? = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    static let openssl: String? = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static let shared: Result<Nginx, ServerError> = {
        do { return .success(try Nginx()) } catch {
            return .failure(ServerError(description: "nginx did not start: \(error)"))
        }
    }()

    /// The generated feeds: name → item count.
    static let feeds: [String: Int] = ["small.xml": 20, "medium.xml": 1500]

    private init() throws {
        guard let nginx = Self.executable else { throw ServerError(description: "nginx is not installed (run scripts/setup.sh)") }
        let fm = FileManager.default
        directory = fm.temporaryDirectory.appendingPathComponent("feedingest-nginx-\(UUID().uuidString)")
        for sub in ["www/feeds", "logs", "tmp"] {
            try fm.createDirectory(at: directory.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        for (name, items) in Self.feeds {
            try FeedFixture.rss(items: items).write(to: directory.appendingPathComponent("www/feeds/\(name)"))
        }
        var certificate: String? = nil
        var tlsPort: Int? = nil
        if let openssl = Self.openssl {
            let key = directory.appendingPathComponent("key.pem").path
            let cert = directory.appendingPathComponent("cert.pem").path
            let make = Process()
            make.executableURL = URL(fileURLWithPath: openssl)
            make.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                              "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                              "-addext", "subjectAltName=IP:127.0.0.1"]
            make.standardOutput = FileHandle.nullDevice
            make.standardError = FileHandle.nullDevice
            try make.run()
            make.waitUntilExit()
            if make.terminationStatus == 0 {
                certificate = cert
                tlsPort = try freePort()
            }
        }
        self.certificate = certificate
        self.tlsPort = tlsPort
        var lastError = "no attempt"
        for _ in 0..<5 {
            let port = try freePort()
            let config = Self.configuration(directory: directory, port: port, tlsPort: tlsPort, certificate: certificate)
            let configPath = directory.appendingPathComponent("nginx.conf")
            try config.write(to: configPath, atomically: true, encoding: .utf8)
            // A watchdog shell: nginx runs while this test process (and no stop file) is there. SIGKILL, because
            // nginx inherits the test process's blocked signal mask and would not see SIGTERM.
            let script = """
                "$0" -p "$1" -c "$2" -e "$1/logs/error.log" -g 'daemon off;' </dev/null >/dev/null 2>&1 & pid=$!
                while kill -0 "$3" 2>/dev/null && kill -0 $pid 2>/dev/null && [ ! -e "$1/stop" ]; do sleep 0.3; done
                kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
                if [ ! -e "$1/stop" ]; then rm -rf "$1"; fi
                """
            let child = try ChildProcess("/bin/sh", ["-c", script, nginx, directory.path, configPath.path, testProcessID])
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline && child.process.isRunning && !isListening(port: port) {
                Thread.sleep(forTimeInterval: 0.02)
            }
            if isListening(port: port) && (tlsPort.map(isListening(port:)) ?? true) {
                self.port = port
                self.child = child
                return
            }
            _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("stop").path, contents: nil)
            child.process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory.appendingPathComponent("stop"))
            lastError = (try? String(contentsOf: directory.appendingPathComponent("logs/error.log"), encoding: .utf8)) ?? "no log"
        }
        throw ServerError(description: "nginx did not listen: \(lastError)")
    }

    private static func configuration(directory: URL, port: Int, tlsPort: Int?, certificate: String?) -> String {
        let p = directory.path
        var tls = ""
        if let tlsPort, certificate != nil {
            tls = """
                    listen 127.0.0.1:\(tlsPort) ssl http2;
                    ssl_certificate \(p)/cert.pem;
                    ssl_certificate_key \(p)/key.pem;
                    http2_max_concurrent_streams 128;

            """
        }
        return """
        # Generated by the Fetch tests: everything stays inside \(p).
        worker_processes 1;
        master_process off;
        pid \(p)/nginx.pid;
        error_log \(p)/logs/error.log warn;
        events { worker_connections 1024; }
        http {
            types {
                application/rss+xml xml rss rdf;
                application/atom+xml atom;
                application/json json;
                text/plain txt;
            }
            default_type application/octet-stream;
            log_format fetch '$remote_addr conn=$connection req=$connection_requests "$request" $status $body_bytes_sent "$http_user_agent"';
            access_log \(p)/logs/access.log fetch;
            client_body_temp_path \(p)/tmp/body;
            proxy_temp_path \(p)/tmp/proxy;
            fastcgi_temp_path \(p)/tmp/fastcgi;
            uwsgi_temp_path \(p)/tmp/uwsgi;
            scgi_temp_path \(p)/tmp/scgi;
            sendfile on;
            keepalive_timeout 60s;
            keepalive_requests 10000;
            etag on;
            gzip on;
            gzip_comp_level 5;
            gzip_min_length 256;
            gzip_types application/rss+xml application/atom+xml application/xml text/xml application/json;
            gzip_vary on;
            server {
                listen 127.0.0.1:\(port);
        \(tls)        server_name localhost;
                root \(p)/www;
                location /corpus/ { alias \(Paths.corpus.path)/; }
                location /slow/ { alias \(p)/www/; limit_rate 256k; }
                location /plain/ { alias \(p)/www/; gzip off; }
                location /static/ { alias \(p)/www/; gzip off; gzip_static on; }
            }
        }

        """
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// `https://127.0.0.1:<tlsPort><path>`, when TLS is on.
    func tlsURL(_ path: String) -> URL? {
        tlsPort.map { URL(string: "https://127.0.0.1:\($0)\(path)")! }
    }

    /// Writes a generated file into the served tree, at `/<name>`.
    func write(_ data: Data, as name: String) throws -> URL {
        let file = directory.appendingPathComponent("www").appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
        return url("/\(name)")
    }
}
