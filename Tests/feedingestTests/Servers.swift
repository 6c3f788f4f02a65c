import Foundation

/// nginx from Debian on 127.0.0.1, serving one directory with gzip, ETag and Last-Modified, like a real feed host;
/// its prefix, logs and temp dirs in a temp folder. A watchdog shell kills it when the test process ends.
final class NginxServer {
    let port: Int
    let directory: URL
    private let watchdog = Process()

    init(serving root: URL) throws {
        guard let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw ServerStartError(message: "nginx is not installed (run 'make setup')")
        }
        directory = try Paths.temporaryDirectory()
        for sub in ["logs", "tmp"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        let port = try freeLoopbackPort()
        let p = directory.path
        let configuration = """
            worker_processes 1;
            master_process off;
            pid \(p)/nginx.pid;
            error_log \(p)/logs/error.log warn;
            events { worker_connections 1024; }
            http {
                types { application/rss+xml xml rss rdf; application/atom+xml atom; application/json json; }
                default_type application/octet-stream;
                access_log \(p)/logs/access.log;
                client_body_temp_path \(p)/tmp/body;
                proxy_temp_path \(p)/tmp/proxy;
                fastcgi_temp_path \(p)/tmp/fastcgi;
                uwsgi_temp_path \(p)/tmp/uwsgi;
                scgi_temp_path \(p)/tmp/scgi;
                etag on;
                gzip on;
                gzip_types application/rss+xml application/atom+xml application/xml text/xml;
                server {
                    listen 127.0.0.1:\(port);
                    root \(root.path);
                }
            }
            """
        let configurationPath = directory.appendingPathComponent("nginx.conf").path
        try configuration.write(toFile: configurationPath, atomically: true, encoding: .utf8)
        // SIGKILL from the watchdog: nginx inherits the test runner's blocked signal mask and may not see SIGTERM.
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", """
            "$0" -p "$1" -c "$2" -e "$1/logs/error.log" -g 'daemon off;' </dev/null >/dev/null 2>&1 & pid=$!
            while kill -0 "$3" 2>/dev/null && kill -0 $pid 2>/dev/null && [ ! -e "$1/stop" ]; do sleep 0.2; done
            kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$1"
            """, nginx, p, configurationPath, String(getpid())]
        try watchdog.run()
        let deadline = Date().addingTimeInterval(10)
        while !isListening(port) {
            guard Date() < deadline, watchdog.isRunning else {
                throw ServerStartError(message: "nginx did not listen on 127.0.0.1:\(port)")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        self.port = port
    }

    /// `http://127.0.0.1:<port>/<path>`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// How many requests nginx logged with this status.
    func requests(status: Int) -> Int {
        let log = (try? String(contentsOf: directory.appendingPathComponent("logs/access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { $0.contains("\" \(status) ") }.count
    }

    deinit {
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("stop").path, contents: nil)
        watchdog.waitUntilExit()
    }
}

/// `scripts/fault_server.py` on 127.0.0.1: misbehaving responses (`/status?code=429&retry=120`, `/reset`, ...).
final class FaultServer {
    let port: Int
    private let process = Process()

    init() throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", Paths.packageRoot.appendingPathComponent("scripts/fault_server.py").path,
                             "--parent", String(getpid())]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5).prefix { $0.isNumber }) else {
            kill(process.processIdentifier, SIGKILL)
            throw ServerStartError(message: "the fault server did not start: \(text)")
        }
        self.port = port
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

struct ServerStartError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// A port nothing listens on right now (bound to 0, read back, closed).
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw ServerStartError(message: "socket: \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw ServerStartError(message: "bind: \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts connections on 127.0.0.1:`port`.
func isListening(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}
