import Foundation
import Support
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A throw-away PostgreSQL server of the tests' own (never Debian's cluster or service): `initdb` into a fresh folder
/// under the temporary directory owned by the `postgres` system user (PostgreSQL refuses to run as root), `pg_ctl start`
/// as that user (`runuser -u postgres -- …`), listening on a unix socket in that folder and on 127.0.0.1 at a free port.
///
/// It is stopped (`pg_ctl stop -m fast`) and its folder removed by ``stop()`` or when this object goes away, and a small
/// watchdog stops and removes it when the test process dies without doing so (like the Python servers' `--parent`).
/// Authentication: `trust` for every role but `feedingest_pw`, which needs its password (`scram-sha-256`), so a test can
/// check a wrong password. `fsync` is off: a test server needs no durability, and initdb skips its syncs too.
public final class PostgresServer: @unchecked Sendable {
    // @unchecked Sendable: every stored property is set in init and never changes, but for `stopped`, behind a Mutex;
    // the server is driven through child processes, which any thread may start.
    /// The folder: the data directory (`data/`), the log (`log`) and the unix socket (`.s.PGSQL.<port>`).
    public let directory: String
    /// The TCP port on 127.0.0.1 (also the socket's number).
    public let port: Int
    /// The folder of `initdb`, `pg_ctl`, `postgres` and `psql` (`/usr/lib/postgresql/<version>/bin`).
    public let bin: String
    /// The role with a password, and its password.
    public static let passwordRole = (name: "feedingest_pw", password: "s3cret-Horse-Battery")
    private let watchdog: pid_t
    private let stopped = Lock(false)
    private let databases = Atomic<Int>(0)

    /// One server for the whole test process, started on first use; tests keep apart with a database each
    /// (``createDatabase(owner:)``).
    public static let shared: Result<PostgresServer, TestSupportError> = {
        do { return .success(try PostgresServer()) } catch let error as TestSupportError {
            return .failure(error)
        } catch {
            return .failure(TestSupportError("the PostgreSQL server did not start: \(error)"))
        }
    }()

    /// The newest installed server's binaries, or `nil`.
    public static var installedBin: String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        for version in versions.reversed() where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/pg_ctl") {
            return "\(root)/\(version)/bin"
        }
        return nil
    }

    /// Initialises and starts a server.
    public init() throws {
        guard let bin = Self.installedBin else {
            throw TestSupportError("no PostgreSQL server under /usr/lib/postgresql (make setup installs the postgresql package)")
        }
        guard getpwnam("postgres") != nil else { throw TestSupportError("no postgres system user (the postgresql package creates it)") }
        self.bin = bin
        port = try Loopback.freePort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("feedingest-pg-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try Self.run("/bin/chown", ["postgres:postgres", directory])
        let data = directory + "/data"
        try Self.asPostgres(directory, "\(bin)/initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"])
        let configuration = """
            listen_addresses = '127.0.0.1'
            port = \(port)
            unix_socket_directories = '\(directory)'
            max_connections = 300
            shared_buffers = 64MB
            fsync = off
            synchronous_commit = off
            full_page_writes = off
            log_min_messages = warning
            log_connections = off

            """
        try Self.append(configuration, to: data + "/postgresql.conf")
        let hba = """
            local all \(Self.passwordRole.name) scram-sha-256
            host all \(Self.passwordRole.name) 127.0.0.1/32 scram-sha-256
            local all all trust
            host all all 127.0.0.1/32 trust

            """
        try hba.write(toFile: data + "/pg_hba.conf", atomically: false, encoding: .utf8)
        try Self.run("/bin/chown", ["postgres:postgres", data + "/pg_hba.conf"])
        // The watchdog first: should start fail half-way, it still cleans up once this process is gone.
        // Spawned with posix_spawn, not Foundation's Process: a Process that never exits kept Process from reaping the
        // children started after it here (psql stayed a zombie and ChildProcess.run waited for ever).
        watchdog = try Self.spawnDetached("""
            for fd in /proc/$$/fd/*; do n=${fd##*/}; if [ "$n" -gt 2 ]; then eval "exec $n>&-"; fi; done 2>/dev/null
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
            runuser -u postgres -- "\(bin)/pg_ctl" -D "\(data)" -m immediate -w stop >/dev/null 2>&1
            rm -rf "\(directory)"
            """)
        do {
            try Self.asPostgres(directory, "\(bin)/pg_ctl", ["-D", data, "-l", directory + "/log", "-w", "-t", "60", "start"])
            _ = try psql("SELECT 1")
            try psql("CREATE ROLE \(Self.passwordRole.name) LOGIN PASSWORD '\(Self.passwordRole.password)'")
        } catch {
            stop()
            throw TestSupportError("the PostgreSQL server did not start: \(error)\n\(log)")
        }
    }

    deinit { stop() }

    /// The server's log so far.
    public var log: String { (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? "" }

    /// Stops the server (fast: open sessions are rolled back) and removes its folder; idempotent.
    public func stop() {
        let first = stopped.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        _ = try? Self.asPostgres(directory, "\(bin)/pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "-t", "60", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
        Glibc.kill(watchdog, SIGKILL)
        var status: Int32 = 0
        while waitpid(watchdog, &status, 0) < 0 && errno == EINTR {}
    }

    /// Restarts the server (fast shutdown: every session is cut off, open transactions roll back), as a crash or an
    /// administrator's restart would, and waits until it accepts connections again.
    public func restart() throws {
        try Self.asPostgres(directory, "\(bin)/pg_ctl", ["-D", directory + "/data", "-l", directory + "/log", "-m", "fast", "-w", "-t", "60", "restart"])
    }

    /// Stops the server for a while (`pg_ctl stop -m fast`); ``start()`` brings it back.
    public func pause() throws {
        try Self.asPostgres(directory, "\(bin)/pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "-t", "60", "stop"])
    }

    /// Starts the server again after ``pause()``.
    public func start() throws {
        try Self.asPostgres(directory, "\(bin)/pg_ctl", ["-D", directory + "/data", "-l", directory + "/log", "-w", "-t", "60", "start"])
    }

    /// A new, empty UTF-8 database (`feedingest_test_N`), owned by `owner`.
    @discardableResult
    public func createDatabase(owner: String = "postgres", _ label: String = "test") throws -> String {
        let name = "feedingest_\(label.filter { $0.isLetter || $0.isNumber }.prefix(30).lowercased())_\(databases.add(1, ordering: .relaxed).newValue)_\(getpid())"
        try psql("CREATE DATABASE \(name) OWNER \(owner) ENCODING 'UTF8' TEMPLATE template0")
        return name
    }

    /// A `postgresql://` URI for `database`: over the unix socket (`?host=` the folder), or over TCP to 127.0.0.1.
    public func uri(_ database: String, user: String = "postgres", password: String? = nil, tcp: Bool = false) -> String {
        let credentials = password.map { "\(user):\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" } ?? user
        if tcp { return "postgresql://\(credentials)@127.0.0.1:\(port)/\(database)" }
        return "postgresql://\(credentials)@/\(database)?host=\(directory)&port=\(port)"
    }

    /// Runs SQL with `psql` (an independent client) as the superuser and returns its unaligned, tuples-only output.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres", user: String = "postgres") throws -> String {
        let finished = try ChildProcess.run("\(bin)/psql", ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", directory,
                                                            "-p", String(port), "-U", user, "-d", database, "-c", sql])
        guard finished.status == 0 else {
            throw TestSupportError("psql failed (\(finished.status)): \(finished.standardError) for \(sql)")
        }
        return finished.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The rows of a query, each a list of columns (psql's `|` separated output).
    public func rows(_ sql: String, database: String) throws -> [[String]] {
        try psql(sql, database: database).split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
    }

    /// An integer a query returns.
    public func integer(_ sql: String, database: String) throws -> Int {
        let text = try psql(sql, database: database)
        guard let value = Int(text) else { throw TestSupportError("not an integer: '\(text)' from \(sql)") }
        return value
    }

    /// Starts `psql` holding a transaction open: runs `sql` in it, then waits `seconds` before committing.
    /// Returns once the server shows the session sleeping (so `sql` holds its locks).
    public func holdTransaction(_ sql: String, database: String, seconds: Double) throws -> ChildProcess {
        let child = try ChildProcess("\(bin)/psql", ["-X", "-q", "-A", "-t", "-h", directory, "-p", String(port), "-U", "postgres",
                                                     "-d", database, "-c", "BEGIN", "-c", sql,
                                                     "-c", "SELECT pg_sleep(\(seconds)) /* feedingest-hold */", "-c", "COMMIT"])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let sleeping = try integer("""
                SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database)' AND query LIKE '%feedingest-hold%'
                  AND state = 'active' AND pid <> pg_backend_pid()
                """, database: "postgres")
            if sleeping > 0 { return child }
            usleep(20_000)
        }
        throw TestSupportError("the holding psql session never started")
    }

    /// Runs a server program as the `postgres` user, its output into a file of `directory`. Not through pipes, and with
    /// every inherited descriptor above 2 closed first: `pg_ctl start` leaves the postmaster running, and a daemon that
    /// inherited a pipe (this process's, or another test's started at the same moment) would keep its reader waiting
    /// for an end of file that never comes.
    private static func asPostgres(_ directory: String, _ executable: String, _ arguments: [String]) throws {
        let output = directory + "/command.out"
        // posix_spawn and wait4 (Spawn.run), not Foundation's Process: with the postmaster left running, Process did not
        // always reap pg_ctl's runuser here and waitUntilExit never returned.
        let finished = try Spawn.run("/bin/bash", ["-c", """
            for fd in /proc/$$/fd/*; do n=${fd##*/}; if [ "$n" -gt 2 ]; then eval "exec $n>&-"; fi; done 2>/dev/null
            exec /usr/sbin/runuser -u postgres -- "$@" > "\(output)" 2>&1
            """, "bash", executable] + arguments, discardsOutput: true, timeout: 120)
        guard finished.exitStatus == 0 else {
            let said = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            throw TestSupportError("\((executable as NSString).lastPathComponent) \(arguments.joined(separator: " ")) failed "
                                   + "(\(finished.exitStatus)): \(said)")
        }
    }

    /// Starts `bash -c script` with /dev/null on its standard streams, without waiting for it.
    private static func spawnDetached(_ script: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in 0...2 { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        let argv: [UnsafeMutablePointer<CChar>?] = (["/bin/bash", "-c", script] as [String]).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", &actions, nil, argv, environ)
        guard spawned == 0 else { throw TestSupportError("posix_spawn bash: \(String(cString: strerror(spawned)))") }
        return pid
    }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let finished = try ChildProcess.run(executable, arguments)
        guard finished.status == 0 else {
            throw TestSupportError("\((executable as NSString).lastPathComponent) \(arguments.joined(separator: " ")) failed "
                                   + "(\(finished.status)): \(finished.standardError)\(finished.standardOutput)")
        }
    }

    private static func append(_ text: String, to path: String) throws {
        guard let handle = FileHandle(forWritingAtPath: path) else { throw TestSupportError("cannot open \(path)") }
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }
}
