import Dispatch
import Foundation
import Support
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `feedingest` on a PostgreSQL store, end to end: the built binary, the tests' own PostgreSQL server (TestSupport's
/// `PostgresServer`), feeds from the fault server or nginx on 127.0.0.1. Several processes at once, killed and paused
/// processes, and every bad location or role the issue lists.
@Suite("feedingest on PostgreSQL: scale-out, failures, bad input", .serialized)
struct PostgresCommandTests {
    static func server() throws -> PostgresServer { try PostgresServer.shared.get() }

    /// A list of `count` fault-server feeds of `items` items each, each with a token of its own (its request counter).
    static func faultList(_ faults: FaultServer, count: Int, items: Int, prefix: String, in directory: URL) throws -> (URL, [String]) {
        let tokens = (0..<count).map { "\(prefix)-\($0)" }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data(tokens.map { faults.url("/feed?items=\(items)&token=\($0)").absoluteString }.joined(separator: "\n").utf8).write(to: list)
        return (list, tokens)
    }

    /// `(feed, id)` of every article line.
    static func articleKeys(_ output: String) -> [String] {
        output.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return "\(object["feed"] as? String ?? "")#\(object["id"] as? String ?? "")"
        }
    }

    static func summary(_ report: URL) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [String: Any] ?? [:]
        return object["summary"] as? [String: Any] ?? [:]
    }

    /// The same promise on both engines: SQLite's claims run under its write lock.
    @Test(arguments: ["postgresql", "sqlite"])
    func threeProcessesAtOnceFetchEachFeedExactlyOnce(_ engine: String) throws {
        let pg = try Self.server()
        let database = try pg.createDatabase("three")
        let faults = try FaultServer()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let uri = engine == "sqlite" ? directory.appendingPathComponent("store.sqlite").path : pg.uri(database)
        func count(_ sql: String) throws -> Int {
            if engine == "sqlite" {
                return try IngestCommandTests.count(String(sql.dropFirst("SELECT count(*) FROM ".count)), in: URL(fileURLWithPath: uri))
            }
            return try pg.integer(sql, database: database)
        }
        let (list, tokens) = try Self.faultList(faults, count: 300, items: 3, prefix: "three", in: directory)

        let results = Lock<[Int: CommandRunner.Result]>([:])
        DispatchQueue.concurrentPerform(iterations: 3) { process in
            let report = directory.appendingPathComponent("report-\(process).json").path
            // --due: the schedule, as cron runs on several hosts use it; an explicit run without it would fetch every
            // feed again after another process did (never at the same time).
            let result = try? CommandRunner.run([list.path, "--store", uri, "--report", report, "--due"])
            results.withLock { $0[process] = result }
        }
        var union: [String] = []
        var ok = 0
        for process in 0..<3 {
            let run = try #require(results.withLock { $0[process] })
            #expect(run.status == 0, "\(run.stderr)")
            union += Self.articleKeys(run.stdout)
            let summary = try Self.summary(directory.appendingPathComponent("report-\(process).json"))
            ok += summary["ok"] as? Int ?? 0
            let accounted = (summary["ok"] as? Int ?? 0) + (summary["claimedElsewhere"] as? Int ?? 0) + (summary["deferred"] as? Int ?? 0)
            #expect(accounted == 300, "every feed is fetched here, claimed elsewhere, or fetched by another since: \(summary)")
            #expect(summary["failed"] as? Int == 0)
        }
        #expect(ok == 300, "each feed fetched by exactly one process")
        for token in tokens {
            let requests = try faults.stats(token).requests
            if requests != 1 { Issue.record("feed \(token) was requested \(requests) times") }
        }
        #expect(union.count == 900 && Set(union).count == 900, "the three stdouts together: every article once (\(union.count))")
        #expect(try count("SELECT count(*) FROM articles") == 900)
        #expect(try count("SELECT count(*) FROM feeds WHERE lease_owner IS NOT NULL") == 0, "every lease ended")
        #expect(try count("SELECT count(*) FROM feeds WHERE lease_epoch = 1 AND outcome = 'updated'") == 300)
    }

    /// A process killed while it holds a feed: on its own machine the next run sees its pid gone and takes the feed over
    /// at once; a lease of another machine's process (which may only be cut off) holds until it expires.
    @Test(.disabled(if: SanitizerRun.isActive, "times a fault against a running process; a sanitizer's slowdown lets the run end before the fault lands"),
          arguments: [false, true])
    func aKilledProcessesFeedIsTakenOver(fromAnotherHost: Bool) throws {
        let pg = try Self.server()
        let database = try pg.createDatabase("killed")
        let uri = pg.uri(database)
        let faults = try FaultServer()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        let large = faults.url("/drip?items=1500&size=8192&tick_ms=20&token=killed\(fromAnotherHost)").absoluteString
        try Data("\(large)\n".utf8).write(to: list)

        let first = try ChildProcess(CommandRunner.binary.path, [list.path, "--store", uri, "--lease", "2"])
        var printed = 0
        while printed < 3, first.readLine() != nil { printed += 1 }
        #expect(printed == 3, "the first process stores articles while the feed downloads")
        first.kill(SIGKILL)
        first.waitUntilExit()
        let partial = try pg.integer("SELECT count(*) FROM articles", database: database)
        #expect(partial >= 3 && partial < 1500, "what the killed process committed stays: \(partial)")

        if fromAnotherHost {
            // As a process of another machine would have named itself: its pid cannot be looked at from here.
            _ = try pg.psql("UPDATE feeds SET lease_owner = 'another-host:4242:abc:1-0000-1'", database: database)
            // At once, the lease is still live: another process leaves the feed alone.
            let early = try CommandRunner.run([list.path, "--store", uri])
            #expect(early.status == 0, "\(early.stderr)")
            #expect(early.stderr.contains("1 claimed elsewhere"), "\(early.stderr)")
            Thread.sleep(forTimeInterval: 2.5)
        }
        let takeover = try CommandRunner.run([list.path, "--store", uri])
        #expect(takeover.status == 0, "\(takeover.stderr)")
        #expect(takeover.stderr.contains("1 feed: 1 ok"), "\(takeover.stderr)")
        #expect(try pg.integer("SELECT count(*) FROM articles", database: database) == 1500, "complete")
        #expect(try pg.integer("SELECT count(DISTINCT key) FROM articles", database: database) == 1500, "without duplicates")
        #expect(Self.articleKeys(takeover.stdout).count == 1500 - partial, "the takeover prints only what was missing")
        #expect(try pg.psql("SELECT lease_epoch, outcome FROM feeds", database: database) == "2|updated")
    }

    /// A watch whose PostgreSQL server goes away for a while says so once, counts no feed as failed, and says when the
    /// store is back; the feeds go on.
    @Test(.disabled(if: SanitizerRun.isActive, "times a fault against a running process")) func aStoreOutageIsOneLineNotAFailurePerFeed() throws {
        let pg = try PostgresServer()  // its own: it is stopped and started
        let database = try pg.createDatabase("outage")
        let uri = pg.uri(database)
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        let names = ["bio.rdf", "atp.rss", "theomnishow.rss"]
        try Data(names.map { Paths.realworld.appendingPathComponent($0).path }.joined(separator: "\n").utf8).write(to: list)
        let metrics = directory.appendingPathComponent("metrics.prom")
        let watch = try ChildProcess(CommandRunner.binary.path, ["watch", list.path, "--store", uri, "--min-interval", "1s", "--max-interval", "1s",
                                                                   "--metrics-file", metrics.path], capturesStandardError: true)
        Thread { while watch.readLine() != nil {} }.start()  // its articles: a full pipe would block it
        var stored = 0
        for _ in 0..<200 where stored == 0 {
            Thread.sleep(forTimeInterval: 0.05)
            stored = (try? pg.integer("SELECT count(*) FROM feeds WHERE outcome IS NOT NULL", database: database)) ?? 0
        }
        try pg.pause()
        Thread.sleep(forTimeInterval: 4)  // several rounds of every feed
        try pg.start()
        Thread.sleep(forTimeInterval: 4)
        watch.kill(SIGTERM)
        #expect(watch.waitUntilExit() == 0)
        let metricsText = (try? String(contentsOf: metrics, encoding: .utf8)) ?? ""  // written once more at the stop
        let errors = watch.readStandardError()
        let lines = errors.split(separator: "\n")
        #expect(lines.filter { $0.contains("the store is unavailable") }.count == 1, "one line for the outage: \(errors)")
        #expect(lines.filter { $0.contains("the store is reachable again") }.count == 1, "\(errors)")
        #expect(!names.contains { name in lines.contains { $0.contains(name) } }, "no line per feed: \(errors)")
        #expect(metricsText.contains("feedingest_failures_total 0"), "\(metricsText)")
        #expect(metricsText.contains("outcome=\"store_unavailable\"}"), "\(metricsText)")
    }

    @Test func aStaleWriterIsRejectedAndWritesNothingLate() throws {
        let pg = try Self.server()
        let database = try pg.createDatabase("stale")
        let uri = pg.uri(database)
        let faults = try FaultServer()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        let large = faults.url("/drip?items=1500&size=8192&tick_ms=20&token=stale").absoluteString
        try Data("\(large)\n".utf8).write(to: list)
        let reportURL = directory.appendingPathComponent("stale.json")

        let stale = try ChildProcess(CommandRunner.binary.path, [list.path, "--store", uri, "--lease", "1", "--report", reportURL.path],
                                     capturesStandardError: true)
        var before: [String] = []
        while before.count < 3, let line = stale.readLine() { before.append(line) }
        stale.kill(SIGSTOP)
        Thread.sleep(forTimeInterval: 1.6)  // past the lease; the stopped process cannot renew it

        let fresh = try CommandRunner.run([list.path, "--store", uri])
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(fresh.stderr.contains("1 feed: 1 ok"), "the other process took the feed over: \(fresh.stderr)")
        let settled = try pg.psql("SELECT lease_epoch, lease_owner IS NULL, last_attempt, last_seen_count, outcome FROM feeds",
                                  database: database)
        #expect(settled.hasPrefix("2|t|"), "\(settled)")
        let count = try pg.integer("SELECT count(*) FROM articles", database: database)
        #expect(count == 1500)

        stale.kill(SIGCONT)
        var after: [String] = []
        while let line = stale.readLine() { after.append(line) }
        #expect(stale.waitUntilExit() == 0)
        let errors = stale.readStandardError()
        #expect(errors.contains("lease lost"), "the late writer says so: \(errors)")
        #expect(errors.contains("1 lease lost"), "\(errors)")
        #expect(try pg.psql("SELECT lease_epoch, lease_owner IS NULL, last_attempt, last_seen_count, outcome FROM feeds",
                            database: database) == settled, "the feed's row is the other process's")
        #expect(try pg.integer("SELECT count(*) FROM articles", database: database) == count)
        let union = Self.articleKeys((before + after).joined(separator: "\n")) + Self.articleKeys(fresh.stdout)
        #expect(union.count == 1500 && Set(union).count == 1500, "each article printed once, by whoever committed it")
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: reportURL)) as? [String: Any] ?? [:]
        let feed = (report["feeds"] as? [[String: Any]])?.first
        #expect(feed?["result"] as? String == "lease-lost")
        #expect((feed?["error"] as? [String: Any])?["code"] as? String == "lease-lost")
    }

    @Test func theReadCommandsShowTheSameOnBothEngines() throws {
        let pg = try Self.server()
        let database = try pg.createDatabase("readers")
        let uri = pg.uri(database)
        let nginx = try NginxServer(.init(root: Paths.realworld))
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        let names = IngestCommandTests.feeds.keys.sorted()
        try Data(names.map { "\(nginx.url("/" + $0).absoluteString) corpus \($0.split(separator: ".")[0])" }.joined(separator: "\n").utf8)
            .write(to: list)
        let sqlite = directory.appendingPathComponent("store.sqlite").path
        let intoPostgres = try CommandRunner.run([list.path, "--store", uri])
        let intoSQLite = try CommandRunner.run([list.path, "--store", sqlite])
        #expect(intoPostgres.status == 0 && intoSQLite.status == 0, "\(intoPostgres.stderr)\(intoSQLite.stderr)")
        #expect(Set(Self.articleKeys(intoPostgres.stdout)) == Set(Self.articleKeys(intoSQLite.stdout)))

        // Stored articles read back: the same lines but the arrival time.
        func withoutArrival(_ output: String) -> [String] {
            output.split(separator: "\n").map { $0.replacingOccurrences(of: #""firstSeen":"[^"]*","#, with: "", options: .regularExpression) }
        }
        let pgArticles = try CommandRunner.run(["articles", "--store", uri])
        let sqliteArticles = try CommandRunner.run(["articles", "--store", sqlite])
        #expect(pgArticles.status == 0, "\(pgArticles.stderr)")
        #expect(pgArticles.lines.count > 150)
        #expect(withoutArrival(pgArticles.stdout) == withoutArrival(sqliteArticles.stdout))
        let atp = nginx.url("/atp.rss").absoluteString
        let pgLimited = try CommandRunner.run(["articles", "--store", uri, "--limit", "7", "--feed", atp])
        let sqliteLimited = try CommandRunner.run(["articles", "--store", sqlite, "--limit", "7", "--feed", atp])
        #expect(pgLimited.lines.count == 7)
        #expect(withoutArrival(pgLimited.stdout) == withoutArrival(sqliteLimited.stdout))

        // feeds: the same rows but the times; export-opml: the same document.
        func stable(_ output: String) -> [String] {
            output.split(separator: "\n").map {
                $0.replacingOccurrences(of: #""(lastFetch|lastSuccess|nextFetch)":"[^"]*""#, with: "", options: .regularExpression)
            }
        }
        let pgFeeds = try CommandRunner.run(["feeds", "--json", "--store", uri])
        let sqliteFeeds = try CommandRunner.run(["feeds", "--json", "--store", sqlite])
        #expect(pgFeeds.status == 0 && pgFeeds.lines.count == 5, "\(pgFeeds.stderr)")
        #expect(stable(pgFeeds.stdout) == stable(sqliteFeeds.stdout))
        let pgOPML = try CommandRunner.run(["export-opml", "--store", uri])
        let sqliteOPML = try CommandRunner.run(["export-opml", "--store", sqlite])
        #expect(pgOPML.status == 0 && !pgOPML.stdout.isEmpty)
        func withoutDate(_ text: String) -> String {
            text.replacingOccurrences(of: "<dateCreated>[^<]*</dateCreated>", with: "", options: .regularExpression)
        }
        #expect(withoutDate(pgOPML.stdout) == withoutDate(sqliteOPML.stdout), "the same document but the time it was made")
        // FEEDINGEST_STORE takes the URI too.
        var environment = ProcessInfo.processInfo.environment
        environment["FEEDINGEST_STORE"] = uri
        let fromEnvironment = try CommandRunner.run(["feeds", "--json"], environment: environment)
        #expect(fromEnvironment.status == 0 && stable(fromEnvironment.stdout) == stable(pgFeeds.stdout), "\(fromEnvironment.stderr)")
    }

    /// Runs ingest on `location` and checks it stops at the start: exit 2, one line on stderr, naming the store
    /// without any password.
    static func refusedAtStart(_ location: String, list: URL, mentioning words: [String], password: String? = nil,
                               sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let run = try CommandRunner.run([list.path, "--store", location])
        #expect(run.status == 2, "\(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.stdout.isEmpty, sourceLocation: sourceLocation)
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.count == 1, "one line: \(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.stderr.hasPrefix("feedingest: cannot use the store postgresql://"), "\(run.stderr)", sourceLocation: sourceLocation)
        // The store is named once: not "the store NAME: NAME: why" (a StoreError names its store itself).
        let named = run.stderr.dropFirst("feedingest: cannot use the store ".count)
        if let colon = named.range(of: ": ") {
            #expect(!named[colon.upperBound...].hasPrefix(named[..<colon.lowerBound]), "named twice: \(run.stderr)", sourceLocation: sourceLocation)
        }
        for word in words { #expect(run.stderr.contains(word), "'\(word)' in \(run.stderr)", sourceLocation: sourceLocation) }
        if let password { #expect(!run.stderr.contains(password), "the password leaked: \(run.stderr)", sourceLocation: sourceLocation) }
        return run.stderr
    }

    @Test func unusableLocationsAndRolesAreRefusedAtTheStartWithoutThePassword() throws {
        let pg = try Self.server()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(Paths.realworld.appendingPathComponent("kc0011.rss").path)\n".utf8).write(to: list)
        let password = "Very-Secret-9817"

        // Malformed: libpq's own parser refuses it, and the password is not repeated back.
        _ = try Self.refusedAtStart("postgresql://someone:\(password)@localhost:notaport/db", list: list,
                                    mentioning: ["not a usable PostgreSQL URI", "***"], password: password)
        _ = try Self.refusedAtStart("postgresql://someone:\(password)@/db?nonsense=1", list: list, mentioning: ["nonsense"],
                                    password: password)
        // Unreachable: nothing listens on port 1, nor on a socket folder that does not exist.
        _ = try Self.refusedAtStart("postgresql://someone:\(password)@127.0.0.1:1/db", list: list,
                                    mentioning: ["server is down", "Connection refused"], password: password)
        _ = try Self.refusedAtStart("postgresql:///db?host=/nonexistent/socket/dir", list: list, mentioning: ["No such file or directory"])
        // A wrong password, over TCP and over the socket; the right one works.
        let database = try pg.createDatabase(owner: PostgresServer.passwordRole.name, "password")
        for tcp in [true, false] {
            let wrong = pg.uri(database, user: PostgresServer.passwordRole.name, password: password, tcp: tcp)
            _ = try Self.refusedAtStart(wrong, list: list, mentioning: ["password authentication failed", "check the user and password"],
                                        password: password)
        }
        let right = pg.uri(database, user: PostgresServer.passwordRole.name, password: PostgresServer.passwordRole.password, tcp: true)
        let reportURL = directory.appendingPathComponent("report.json")
        let works = try CommandRunner.run([list.path, "--store", right, "--report", reportURL.path])
        #expect(works.status == 0, "\(works.stderr)")
        #expect(works.lines.count == 20)
        let report = String(decoding: try Data(contentsOf: reportURL), as: UTF8.self)
        #expect(!report.contains(PostgresServer.passwordRole.password) && !works.stderr.contains(PostgresServer.passwordRole.password))
        #expect(report.contains("\"store\":\"postgresql://\(PostgresServer.passwordRole.name):***@127.0.0.1"), "\(report.prefix(300))")
        // A missing database.
        _ = try Self.refusedAtStart(pg.uri("no_such_database_here"), list: list, mentioning: ["does not exist", "createdb"])
        // Another application's database: refused, and nothing written.
        let foreign = try pg.createDatabase("foreign")
        try pg.psql("CREATE TABLE users (id int PRIMARY KEY, name text); INSERT INTO users VALUES (1, 'ada')", database: foreign)
        _ = try Self.refusedAtStart(pg.uri(foreign), list: list, mentioning: ["not a feedingest store", "another application", "users"])
        #expect(try pg.psql("SELECT string_agg(tablename, ',') FROM pg_tables WHERE schemaname = 'public'", database: foreign) == "users")
        // A database whose schema holds only an extension's objects (pg_stat_statements' view) is empty enough.
        let withExtension = try pg.createDatabase("extension")
        try pg.psql("CREATE EXTENSION pg_stat_statements", database: withExtension)
        let extended = try CommandRunner.run([list.path, "--store", pg.uri(withExtension)])
        #expect(extended.status == 0 && extended.lines.count == 20, "\(extended.stderr)")
        // A newer schema.
        let newer = try pg.createDatabase("newer")
        _ = try CommandRunner.run([list.path, "--store", pg.uri(newer), "-q"])
        try pg.psql("UPDATE store_info SET value = '99' WHERE name = 'schema_version'", database: newer)
        _ = try Self.refusedAtStart(pg.uri(newer), list: list, mentioning: ["schema version 99", "upgrade feedingest"])
        // A read-only role: it cannot ingest (refused before any write) but reads.
        let shared = try pg.createDatabase("readonly")
        let filled = try CommandRunner.run([list.path, "--store", pg.uri(shared), "-q"])
        #expect(filled.status == 0)
        try pg.psql("CREATE ROLE feedingest_reader LOGIN")
        try pg.psql("GRANT SELECT ON ALL TABLES IN SCHEMA public TO feedingest_reader", database: shared)
        _ = try Self.refusedAtStart(pg.uri(shared, user: "feedingest_reader"), list: list, mentioning: ["read-only role", "feedingest_reader"])
        let read = try CommandRunner.run(["articles", "--store", pg.uri(shared, user: "feedingest_reader")])
        #expect(read.status == 0 && read.lines.count == 20, "\(read.stderr)")
        #expect(try pg.integer("SELECT count(*) FROM articles", database: shared) == 20)
    }

    @Test(.disabled(if: SanitizerRun.isActive, "times a fault against a running process; a sanitizer's slowdown lets the run end before the fault lands")) func aStatementTimeoutFailsTheFeedAndTheNextRunCompletes() throws {
        let pg = try Self.server()
        let database = try pg.createDatabase("timeout")
        try pg.psql("CREATE ROLE feedingest_hurried LOGIN; ALTER DATABASE \(database) OWNER TO feedingest_hurried; "
                    + "ALTER ROLE feedingest_hurried SET statement_timeout = '500ms'")
        let uri = pg.uri(database, user: "feedingest_hurried")
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(Paths.realworld.appendingPathComponent("atp.rss").path)\n".utf8).write(to: list)
        // Create the store (empty list), then keep the articles table locked while a feed is ingested.
        let empty = directory.appendingPathComponent("empty.txt")
        try Data("# nothing\n".utf8).write(to: empty)
        #expect(try CommandRunner.run([empty.path, "--store", uri]).status == 0)
        let holder = try pg.holdTransaction("LOCK TABLE articles IN SHARE ROW EXCLUSIVE MODE", database: database, seconds: 4)
        let blocked = try CommandRunner.run([list.path, "--store", uri])
        #expect(blocked.status == 1, "\(blocked.stderr)")
        #expect(blocked.stderr.contains("statement timeout") && blocked.stderr.contains("SQLSTATE 57014"), "\(blocked.stderr)")
        #expect(blocked.stdout.isEmpty)
        holder.waitUntilExit()
        #expect(try pg.integer("SELECT count(*) FROM articles", database: database) == 0, "nothing half-written")
        let again = try CommandRunner.run([list.path, "--store", uri])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.lines.count == 100)
        #expect(try pg.integer("SELECT count(*) FROM articles", database: database) == 100)
    }

    @Test(.disabled(if: SanitizerRun.isActive, "times a fault against a running process; a sanitizer's slowdown lets the run end before the fault lands")) func theServerRestartedMidRunFailsTheFeedsInFlightAndTheNextRunCompletes() throws {
        let pg = try PostgresServer()  // its own: a restart cuts every session off
        let database = try pg.createDatabase("restart")
        let uri = pg.uri(database)
        let faults = try FaultServer()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        let large = faults.url("/drip?items=1500&size=8192&tick_ms=20&token=restart").absoluteString
        try Data("\(large)\n".utf8).write(to: list)
        let run = try ChildProcess(CommandRunner.binary.path, [list.path, "--store", uri], capturesStandardError: true)
        var printed = 0
        while printed < 3, run.readLine() != nil { printed += 1 }
        try pg.restart()
        while run.readLine() != nil { printed += 1 }
        #expect(run.waitUntilExit() == 1)
        let errors = run.readStandardError()
        #expect(errors.contains("store:") && errors.contains("1 failed"), "\(errors)")
        let committed = try pg.integer("SELECT count(*) FROM articles", database: database)
        #expect(committed >= 3 && committed < 1500, "the batches committed before the restart stay, the one in flight does not: \(committed)")
        #expect(try pg.integer("SELECT article_count FROM feeds", database: database) == committed, "nothing half-written")
        let again = try CommandRunner.run([list.path, "--store", uri, "--force"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try pg.integer("SELECT count(*) FROM articles", database: database) == 1500)
        #expect(Self.articleKeys(again.stdout).count == 1500 - committed)
    }
}
