import Foundation
#if canImport(Glibc)
import Glibc
#endif

struct ServerError: Error, CustomStringConvertible {
    var description: String
}

/// nginx from Debian on 127.0.0.1 only, with a throw-away configuration and document root in a temporary directory,
/// started and stopped by the benchmark (as Tests/FetchTests starts it for the Fetch tests).
///
/// Locations, all over the same files (fixtures are symbolic links in the document root):
/// - `/plain/`: the file as it is, no compression;
/// - `/gz/`: the precompressed `.gz` beside the file (`gzip_static`), `Content-Encoding: gzip`, to a client that asks;
/// - `/slow/` and `/slow-gz/`: the same, at most 1 MiB/s per connection (`limit_rate 1m`).
final class LoopbackNginx {
    static let executable: String? = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    /// `limit_rate` of the slow locations, bytes a second.
    static let slowRate = 1 << 20

    let port: Int
    let directory: String
    private let process: Process

    /// Starts nginx serving `files` (absolute paths; each one's `.gz` too, when it exists) by their base names.
    init(files relativeFiles: [String]) throws {
        // Symbolic links need absolute targets (fixture paths are relative to the working directory).
        let files = relativeFiles.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        guard let nginx = Self.executable else {
            throw ServerError(description: "nginx is not installed (make setup, or apt-get install nginx-light)")
        }
        let fm = FileManager.default
        directory = fm.temporaryDirectory.appendingPathComponent("feedingest-bench-nginx-\(getpid())-\(UUID().uuidString.prefix(8))").path
        for sub in ["www", "logs", "tmp"] { try fm.createDirectory(atPath: "\(directory)/\(sub)", withIntermediateDirectories: true) }
        for file in files {
            let name = (file as NSString).lastPathComponent
            try fm.createSymbolicLink(atPath: "\(directory)/www/\(name)", withDestinationPath: file)
            if fm.fileExists(atPath: file + ".gz") {
                try fm.createSymbolicLink(atPath: "\(directory)/www/\(name).gz", withDestinationPath: file + ".gz")
            }
        }
        var lastError = "no attempt"
        for _ in 0..<5 {
            let port = try freeLoopbackPort()
            let configPath = "\(directory)/nginx.conf"
            try Self.configuration(directory: directory, port: port).write(toFile: configPath, atomically: true, encoding: .utf8)
            // A watchdog shell: nginx runs while the benchmark (and no stop file) is there, so a killed benchmark
            // leaves no server behind. SIGKILL: nginx may inherit a blocked SIGTERM.
            let script = """
                "$0" -p "$1" -c "$2" -e "$1/logs/error.log" -g 'daemon off;' </dev/null >/dev/null 2>&1 & pid=$!
                while kill -0 "$3" 2>/dev/null && kill -0 $pid 2>/dev/null && [ ! -e "$1/stop" ]; do sleep 0.3; done
                kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
                rm -rf "$1"
                """
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", script, nginx, directory, configPath, String(getpid())]
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let deadline = monotonicNanos() + 15_000_000_000
            while monotonicNanos() < deadline && process.isRunning && !isListening(port: port) { usleep(20_000) }
            if isListening(port: port) {
                self.port = port
                self.process = process
                return
            }
            lastError = (try? String(contentsOfFile: "\(directory)/logs/error.log", encoding: .utf8)) ?? "no log"
            _ = fm.createFile(atPath: "\(directory)/stop", contents: nil)
            process.waitUntilExit()
            for sub in ["www", "logs", "tmp"] { try fm.createDirectory(atPath: "\(directory)/\(sub)", withIntermediateDirectories: true) }
            for file in files {
                let name = (file as NSString).lastPathComponent
                try? fm.createSymbolicLink(atPath: "\(directory)/www/\(name)", withDestinationPath: file)
                if fm.fileExists(atPath: file + ".gz") {
                    try? fm.createSymbolicLink(atPath: "\(directory)/www/\(name).gz", withDestinationPath: file + ".gz")
                }
            }
        }
        throw ServerError(description: "nginx did not listen on 127.0.0.1: \(lastError)")
    }

    /// Stops nginx and removes its directory (the watchdog does both).
    func stop() {
        _ = FileManager.default.createFile(atPath: "\(directory)/stop", contents: nil)
        process.waitUntilExit()
    }

    /// `http://127.0.0.1:PORT/LOCATION/NAME`.
    func url(_ location: String, _ file: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)/\(location)/\((file as NSString).lastPathComponent)")!
    }

    private static func configuration(directory p: String, port: Int) -> String {
        """
        # Generated by feedingest-bench: everything stays inside \(p), listening on 127.0.0.1 only.
        worker_processes 1;
        master_process off;
        pid \(p)/nginx.pid;
        error_log \(p)/logs/error.log warn;
        events { worker_connections 1024; }
        http {
            types {
                application/rss+xml xml rss;
            }
            default_type application/octet-stream;
            access_log off;
            client_body_temp_path \(p)/tmp/body;
            proxy_temp_path \(p)/tmp/proxy;
            fastcgi_temp_path \(p)/tmp/fastcgi;
            uwsgi_temp_path \(p)/tmp/uwsgi;
            scgi_temp_path \(p)/tmp/scgi;
            sendfile on;
            tcp_nopush on;
            keepalive_timeout 60s;
            keepalive_requests 100000;
            etag on;
            gzip off;
            server {
                listen 127.0.0.1:\(port);
                server_name localhost;
                root \(p)/www;
                location /plain/ { alias \(p)/www/; }
                location /gz/ { alias \(p)/www/; gzip_static on; }
                location /slow/ { alias \(p)/www/; limit_rate \(slowRate); }
                location /slow-gz/ { alias \(p)/www/; gzip_static on; limit_rate \(slowRate); }
            }
        }

        """
    }
}

/// A port that was free on 127.0.0.1 a moment ago (bind to port 0, read it back, close).
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw ServerError(description: "socket failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw ServerError(description: "bind failed") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts connections on 127.0.0.1:`port`.
func isListening(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}
