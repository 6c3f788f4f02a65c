import Foundation

/// nginx from Debian on 127.0.0.1 only, with a throw-away configuration, prefix, logs and document root in a
/// temporary directory: the realistic feed host of the tests and benchmarks (gzip and `gzip_static`, ETag and
/// Last-Modified with 304s, keep-alive, `limit_rate`, and TLS with HTTP/2 when asked).
///
/// A watchdog shell runs nginx and kills it (SIGKILL: nginx inherits the test runner's blocked signal mask and may not
/// see SIGTERM) when this process ends, however it ends, or when ``stop()`` is called; it then removes the directory.
public final class NginxServer: Sendable {
    /// One `location` block. Every location serves the document root (``NginxServer/documentRoot``) unless it has
    /// an alias.
    public struct Location: Sendable {
        /// The URL prefix, such as `/slow/`.
        public var path: String
        /// The directory it serves (an absolute path); `nil`: the document root.
        public var alias: String?
        /// Compress on the fly here (`gzip on|off`); `nil`: as the server does.
        public var gzip: Bool?
        /// Serve `NAME.gz` beside `NAME` to clients that accept gzip (`gzip_static on`).
        public var gzipStatic: Bool
        /// At most this many bytes a second per connection (`limit_rate`).
        public var limitRate: Int?
        /// Serve every file here with this `Content-Type` (such as `application/feed+json`), whatever its name; `nil`:
        /// by the file name's extension.
        public var contentType: String?

        /// A location at `path`; see the properties for the rest.
        public init(_ path: String, alias: String? = nil, gzip: Bool? = nil, gzipStatic: Bool = false, limitRate: Int? = nil,
                    contentType: String? = nil) {
            self.path = path
            self.alias = alias
            self.gzip = gzip
            self.gzipStatic = gzipStatic
            self.limitRate = limitRate
            self.contentType = contentType
        }
    }

    /// What the server serves and how.
    public struct Configuration: Sendable {
        /// The document root; `nil`: a `www` directory of the server's own (fill it with ``NginxServer/write(_:as:)``).
        public var root: URL?
        /// Files written into the document root before nginx starts: relative path → contents.
        public var files: [String: Data] = [:]
        /// Locations besides `/`.
        public var locations: [Location] = []
        /// Compress feeds and JSON on the fly (gzip level 5, bodies of 256 bytes and more).
        public var gzip = true
        /// Also listen with TLS and HTTP/2 on ``NginxServer/tlsPort``, with a self-signed certificate for 127.0.0.1
        /// (``NginxServer/certificate``), when openssl is there to make one.
        public var tls = false
        /// Send ETags (`etag on`); off, a host that only gives Last-Modified.
        public var etag = true
        /// Log every request (``NginxServer/requests(status:)`` reads the log); off for benchmarks.
        public var accessLog = true
        /// Requests one kept-alive connection may carry.
        public var keepaliveRequests = 10_000

        /// A configuration; see the properties.
        public init(root: URL? = nil, locations: [Location] = [], gzip: Bool = true, etag: Bool = true, tls: Bool = false,
                    accessLog: Bool = true) {
            self.root = root
            self.etag = etag
            self.locations = locations
            self.gzip = gzip
            self.tls = tls
            self.accessLog = accessLog
        }
    }

    /// The plain HTTP port on 127.0.0.1.
    public let port: Int
    /// The TLS (HTTP/2) port, when ``Configuration/tls`` was asked for and a certificate could be made.
    public let tlsPort: Int?
    /// The server's own directory: configuration, logs, temp files and (without ``Configuration/root``) `www`.
    public let directory: URL
    /// The directory served at `/`.
    public let documentRoot: URL
    /// The PEM certificate clients must trust for ``tlsPort``.
    public let certificate: String?
    private let watchdog: ChildProcess

    /// Debian's nginx, when installed (`make setup` installs it).
    public static let executable: String? = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    /// openssl, which makes the TLS certificate.
    public static let openssl: String? = ["/usr/bin/openssl", "/usr/local/bin/openssl"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Starts nginx and waits until it listens (up to 15 s; a port taken meanwhile is retried with another, 5 times).
    public init(_ configuration: Configuration = Configuration()) throws {
        guard let nginx = Self.executable else { throw TestSupportError("nginx is not installed (run 'make setup')") }
        let fm = FileManager.default
        directory = fm.temporaryDirectory.appendingPathComponent("feedingest-nginx-\(getpid())-\(UUID().uuidString.prefix(8))")
        for sub in ["www", "logs", "tmp"] {
            try fm.createDirectory(at: directory.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        documentRoot = configuration.root ?? directory.appendingPathComponent("www")
        for (name, data) in configuration.files {
            let file = documentRoot.appendingPathComponent(name)
            try fm.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: file)
        }
        var certificate: String?
        var tlsPort: Int?
        if configuration.tls, let openssl = Self.openssl {
            let key = directory.appendingPathComponent("key.pem").path
            let cert = directory.appendingPathComponent("cert.pem").path
            let make = try ChildProcess(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                                  "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                                                  "-addext", "subjectAltName=IP:127.0.0.1"])
            if make.waitUntilExit() == 0 {
                certificate = cert
                tlsPort = try Loopback.freePort()
            }
        }
        self.certificate = certificate
        self.tlsPort = tlsPort
        let stop = directory.appendingPathComponent("stop").path
        let retry = directory.appendingPathComponent("retry").path
        var lastError = "no attempt"
        for _ in 0..<5 {
            let port = try Loopback.freePort()
            let configPath = directory.appendingPathComponent("nginx.conf")
            try Self.text(of: configuration, directory: directory.path, root: documentRoot.path, port: port, tlsPort: tlsPort)
                .write(to: configPath, atomically: true, encoding: .utf8)
            // nginx runs while this process lives and neither a stop nor a retry file is there. The directory is
            // removed at the end, except when this process retries with another port.
            let script = """
                "$0" -p "$1" -c "$2" -e "$1/logs/error.log" -g 'daemon off;' </dev/null >/dev/null 2>&1 & pid=$!
                while kill -0 "$3" 2>/dev/null && kill -0 $pid 2>/dev/null && [ ! -e "$1/stop" ] && [ ! -e "$1/retry" ]; do sleep 0.2; done
                kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
                if [ -e "$1/stop" ] || ! kill -0 "$3" 2>/dev/null; then rm -rf "$1"; fi
                """
            let child = try ChildProcess("/bin/sh", ["-c", script, nginx, directory.path, configPath.path, ChildProcess.parentArgument])
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline && child.isRunning && !Loopback.isListening(port: port) {
                Thread.sleep(forTimeInterval: 0.02)
            }
            if Loopback.isListening(port: port) && (tlsPort.map(Loopback.isListening(port:)) ?? true) {
                self.port = port
                watchdog = child
                return
            }
            _ = fm.createFile(atPath: retry, contents: nil)
            child.waitUntilExit()
            try? fm.removeItem(atPath: retry)
            lastError = (try? String(contentsOf: directory.appendingPathComponent("logs/error.log"), encoding: .utf8)) ?? "no log"
        }
        _ = fm.createFile(atPath: stop, contents: nil)
        try? fm.removeItem(at: directory)
        throw TestSupportError("nginx did not listen on 127.0.0.1: \(lastError)")
    }

    deinit { stop() }

    /// Stops nginx and removes its directory (the watchdog does both); waits for that. Idempotent.
    public func stop() {
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("stop").path, contents: nil)
        watchdog.waitUntilExit()
    }

    /// `http://127.0.0.1:<port><path>`; `path` starts with `/`.
    public func url(_ path: String) -> URL {
        Loopback.url(port: port, path)
    }

    /// `https://127.0.0.1:<tlsPort><path>`, when TLS is on.
    public func tlsURL(_ path: String) -> URL? {
        tlsPort.map { Loopback.url(port: $0, path, scheme: "https") }
    }

    /// Writes `data` into the document root as `name` (a relative path); its URL.
    @discardableResult
    public func write(_ data: Data, as name: String) throws -> URL {
        let file = documentRoot.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
        return url("/\(name)")
    }

    /// Serves the file at `path` (and its `.gz` copy, when there is one) under its base name, through symbolic links
    /// in the document root, so large fixtures are not copied.
    public func link(_ path: String) throws {
        let fm = FileManager.default
        let target = URL(fileURLWithPath: path).standardizedFileURL.path
        let name = (target as NSString).lastPathComponent
        for (source, link) in [(target, name), (target + ".gz", name + ".gz")] where fm.fileExists(atPath: source) {
            let destination = documentRoot.appendingPathComponent(link).path
            try? fm.removeItem(atPath: destination)
            try fm.createSymbolicLink(atPath: destination, withDestinationPath: source)
        }
    }

    /// How many requests the access log shows with this status.
    public func requests(status: Int) -> Int {
        let log = (try? String(contentsOf: directory.appendingPathComponent("logs/access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { $0.contains("\" \(status) ") }.count
    }

    private static func text(of configuration: Configuration, directory p: String, root: String, port: Int, tlsPort: Int?) -> String {
        var tls = ""
        if let tlsPort {
            tls = """
                    listen 127.0.0.1:\(tlsPort) ssl http2;
                    ssl_certificate \(p)/cert.pem;
                    ssl_certificate_key \(p)/key.pem;
                    http2_max_concurrent_streams 128;

            """
        }
        var locations = ""
        for location in configuration.locations {
            var directives = ["alias \(location.alias ?? root)/;"]
            if let gzip = location.gzip { directives.append("gzip \(gzip ? "on" : "off");") }
            if location.gzipStatic { directives.append("gzip_static on;") }
            if let rate = location.limitRate { directives.append("limit_rate \(rate);") }
            if let type = location.contentType { directives.append("types { } default_type \(type);") }
            locations += "        location \(location.path) { \(directives.joined(separator: " ")) }\n"
        }
        return """
        # Generated by TestSupport's NginxServer: everything stays inside \(p), listening on 127.0.0.1 only.
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
            access_log \(configuration.accessLog ? "\(p)/logs/access.log fetch" : "off");
            client_body_temp_path \(p)/tmp/body;
            proxy_temp_path \(p)/tmp/proxy;
            fastcgi_temp_path \(p)/tmp/fastcgi;
            uwsgi_temp_path \(p)/tmp/uwsgi;
            scgi_temp_path \(p)/tmp/scgi;
            sendfile on;
            tcp_nopush on;
            keepalive_timeout 60s;
            keepalive_requests \(configuration.keepaliveRequests);
            etag \(configuration.etag ? "on" : "off");
            gzip \(configuration.gzip ? "on" : "off");
            gzip_comp_level 5;
            gzip_min_length 256;
            gzip_types application/rss+xml application/atom+xml application/xml text/xml application/json application/feed+json;
            gzip_vary on;
            server {
                listen 127.0.0.1:\(port);
        \(tls)        server_name localhost;
                root \(root);
        \(locations)    }
        }

        """
    }
}
