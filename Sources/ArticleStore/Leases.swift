// Claims and leases, and when a feed is due: the engine-independent rules every engine implements the same way.
import Foundation
import Scheduling

/// An SQLSTATE: the five-character code SQL servers (PostgreSQL among them) give every error.
///
/// The first two characters are the class (`08` connection exception, `28` invalid authorization, `57` operator
/// intervention, …); https://www.postgresql.org/docs/current/errcodes-appendix.html lists PostgreSQL's.
public struct SQLState: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The five characters.
    public let rawValue: String
    /// Creates a code from its five characters.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `28P01` invalid_password.
    public static let invalidPassword = Self(rawValue: "28P01")
    /// `28000` invalid_authorization_specification (no `pg_hba.conf` entry, an unknown role).
    public static let invalidAuthorization = Self(rawValue: "28000")
    /// `3D000` invalid_catalog_name: the database does not exist.
    public static let invalidCatalogName = Self(rawValue: "3D000")
    /// `57014` query_canceled: `statement_timeout` or a cancel request.
    public static let queryCanceled = Self(rawValue: "57014")
    /// `25006` read_only_sql_transaction.
    public static let readOnlyTransaction = Self(rawValue: "25006")
    /// `42501` insufficient_privilege.
    public static let insufficientPrivilege = Self(rawValue: "42501")
    /// `42P01` undefined_table.
    public static let undefinedTable = Self(rawValue: "42P01")
    /// `57P01` admin_shutdown: the server is shutting down.
    public static let adminShutdown = Self(rawValue: "57P01")

    /// The class: the first two characters.
    public var errorClass: String { String(rawValue.prefix(2)) }

    /// The five characters.
    public var description: String { rawValue }
}

/// A process's claim on a feed: only the holder fetches it, and its results are written only while ``epoch`` is still
/// the feed's.
///
/// A claim sets the feed's lease owner and expiry and increments its epoch, in one statement (see
/// ``StoreContext/claimFeeds(_:)``). Every transaction that writes the feed's results (article batches, the final
/// `finishFeed`/`failFeed`) first checks, with the feed's row locked, that the epoch is still this one; a process that
/// lost its lease (it stalled past ``until`` and another process claimed the feed) gets
/// ``StoreError/Kind/leaseLost(_:)`` and writes nothing more. The lease ends when the feed is finished or failed, when it
/// is released, or when it expires (its holder died).
public struct FeedLease: Sendable, Hashable {
    /// The feed.
    public var feed: FeedID
    /// The feed's lease epoch after this claim: one more than any earlier claim's.
    public var epoch: Int64
    /// Who holds it (``LeaseOwner``).
    public var owner: String
    /// When it expires unless renewed, by the database's clock.
    public var until: Date
    /// When the claim was made, by the database's clock: the start of the interval a success records.
    public var claimedAt: Date
    /// The feed's stored validators at the moment of the claim, for the conditional GET.
    public var validators: FeedValidators

    /// Creates a lease value.
    public init(feed: FeedID, epoch: Int64, owner: String, until: Date, claimedAt: Date, validators: FeedValidators = FeedValidators()) {
        self.feed = feed
        self.epoch = epoch
        self.owner = owner
        self.until = until
        self.claimedAt = claimedAt
        self.validators = validators
    }
}

/// Names a lease holder, `host:pid:random:identity`: unique per process run, so two processes on two hosts (or one
/// process started twice) never mistake each other's leases for their own; and, on the machine that wrote it, enough to
/// tell whether the holder still runs (``isDefunct(_:)``).
///
/// `identity` is the process's start time (clock ticks after boot, `/proc/PID/stat` field 22), the first 8 characters
/// of the kernel's boot id (`/proc/sys/kernel/random/boot_id`) and the inode of its PID namespace, joined by `-`: a
/// pid alone may be reused, and the same pid in another container or another boot is another process.
public enum LeaseOwner {
    /// A new owner name for this process.
    public static func make() -> String {
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        return "\(hostName.prefix(40)):\(getpid()):\(random):\(ProcessIdentity.current(getpid()) ?? "-")"
    }

    /// Whether `owner` names a process of this machine (the same host name, kernel boot and PID namespace) that no
    /// longer runs: its pid is gone, or belongs to a process started at another time. The owners of other machines,
    /// and those of an older form without the identity, are never defunct: their leases run out as usual.
    public static func isDefunct(_ owner: String) -> Bool {
        let parts = owner.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == hostName.prefix(40), let pid = Int32(parts[1]), pid > 0 else { return false }
        let identity = parts[3].split(separator: "-")
        guard identity.count == 3, let here = ProcessIdentity.machine, identity[1...].joined(separator: "-") == here else { return false }
        guard let now = ProcessIdentity.current(pid) else { return true }  // no such process
        return now != String(parts[3])
    }

    private static let hostName: String = {
        var name = [CChar](repeating: 0, count: 256)
        return gethostname(&name, name.count - 1) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "host"
    }()
}

/// A process as this machine identifies it, for ``LeaseOwner``: read from `/proc`.
enum ProcessIdentity {
    /// `boot8-pidns` of this process: the kernel boot and the PID namespace its pids belong to; `nil` without `/proc`.
    static let machine: String? = {
        guard let boot = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8),
              let namespace = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/pid")
        else { return nil }
        let inode = namespace.filter(\.isNumber)  // "pid:[4026531836]"
        return "\(boot.prefix(8))-\(inode)"
    }()

    /// `start-boot8-pidns` of the process `pid` of this namespace; `nil` when there is no such process (or no `/proc`).
    static func current(_ pid: Int32) -> String? {
        guard let machine, let start = startTime(pid) else { return nil }
        return "\(start)-\(machine)"
    }

    /// The start time of `pid` in clock ticks after boot: field 22 of `/proc/PID/stat`, counted after the command
    /// name's closing parenthesis (the name may hold spaces and parentheses).
    static func startTime(_ pid: Int32) -> UInt64? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: field 3 (state) is fields[0], so field 22 is fields[19].
        guard fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }
}

/// What a claim asks for.
public struct ClaimRequest: Sendable, Hashable {
    /// The feeds that may be claimed (a one-shot run's list); only those due and without a live lease are.
    public var candidates: [FeedID]
    /// At most this many.
    public var limit: Int
    /// The owner to record (``LeaseOwner/make()``).
    public var owner: String
    /// How long the lease lasts unless renewed.
    public var duration: Duration
    /// At most this many live leases per host (``FeedHost``), counting every process's: the politeness limit across
    /// all processes sharing the store. Feeds without a host (local files) are not limited. 0 for no limit.
    public var perHostLimit: Int
    /// Which candidates count as due (``DuePolicy``); a live lease excludes a feed whatever the policy.
    public var due: DuePolicy

    /// Creates a request.
    public init(candidates: [FeedID], limit: Int, owner: String, duration: Duration, perHostLimit: Int = 6,
                due: DuePolicy = .scheduled) {
        self.candidates = candidates
        self.limit = limit
        self.owner = owner
        self.duration = duration
        self.perHostLimit = perHostLimit
        self.due = due
    }
}

extension DuePolicy {
    /// Whether a feed with this row is due at `now` under the policy: the rule every engine's claim applies in SQL.
    public func isDue(_ status: FeedStatus, at now: Date) -> Bool {
        isDue(nextFetch: status.nextFetch, isLocal: status.host == nil, isRateLimited: status.isRateLimited,
              consecutiveFailures: status.consecutiveFailures, at: now)
    }
}

/// Why a candidate feed was not claimed, as ``StoreContext/claimStates(_:owner:)`` reads it.
public enum ClaimState: Sendable, Hashable {
    /// Due and without a live lease: it can be claimed (it was left out by the limit or a host's limit).
    case claimable
    /// Another owner holds a live lease on it.
    case leasedElsewhere
    /// Not due under the claim's ``DuePolicy``: someone fetched it (or backed it off) since it was listed, or a server
    /// asked it to wait.
    case notDue
    /// This owner holds it.
    case leasedHere
}
