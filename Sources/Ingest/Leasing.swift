import ArticleStore
import Dispatch
import Foundation
import Scheduling
import Synchronization

/// One run's leases: its owner name, and a store thread of its own (`feedingest.leases`, owning one store context) that
/// claims, renews and releases them. Only `FeedID`s, leases and errors cross to it.
///
/// While the run lasts a renewal thread (`feedingest.renew`) extends every lease the run holds each third of
/// ``duration``; a feed missing from a renewal was taken over (this process stalled past its lease): the schedule stops
/// its transfer and its worker reports the lease lost. At the end every lease still held is released.
final class Leasing: Sendable {
    /// The owner recorded with each lease (``LeaseOwner/make()``).
    let owner: String
    /// How long a lease lasts unless renewed.
    let duration: Duration
    /// Live leases per host across every process.
    let perHostLimit: Int
    /// Which feeds count as due.
    let due: DuePolicy
    private let thread: StoreThread
    private let stopping = DispatchSemaphore(value: 0)
    private let renewerDone = DispatchSemaphore(value: 0)
    private let renewing = Atomic<Bool>(false)

    /// Starts the lease thread, and ends the leases of this machine's processes that no longer run (killed, crashed),
    /// so the run can claim their feeds at once.
    init(store: Store, duration: Duration, perHostLimit: Int, due: DuePolicy) throws(StoreError) {
        owner = LeaseOwner.make()
        self.duration = duration
        self.perHostLimit = perHostLimit
        self.due = due
        thread = try StoreThread.start(store: store, name: "feedingest.leases", emitAll: { _ in })
        do {
            try thread.perform { context throws(StoreError) in _ = try context.releaseLeasesOfDefunctOwners() }
        } catch {
            thread.stop()
            throw error
        }
    }

    /// Claims up to `limit` of `candidates`.
    func claim(_ candidates: [FeedID], limit: Int) throws(StoreError) -> [FeedLease] {
        let request = ClaimRequest(candidates: candidates, limit: limit, owner: owner, duration: duration,
                                   perHostLimit: perHostLimit, due: due)
        return try thread.perform { context throws(StoreError) in try context.claimFeeds(request) }
    }

    /// Why each candidate is or is not claimable.
    func states(_ candidates: [FeedID]) throws(StoreError) -> [FeedID: ClaimState] {
        let owner = self.owner
        let due = self.due
        return try thread.perform { context throws(StoreError) in try context.claimStates(candidates, owner: owner, due: due) }
    }

    /// Starts renewing the leases `schedule` holds, every third of the lease's duration.
    func startRenewing(_ schedule: RunSchedule) {
        let period = max(duration.seconds / 3, 0.05)
        let worker = Thread { [self] in
            defer { renewerDone.signal() }
            while stopping.wait(timeout: .now() + period) == .timedOut {
                let held = schedule.heldLeases
                guard !held.isEmpty else { continue }
                let feeds = held.map(\.feed)
                let owner = self.owner
                let duration = self.duration
                guard let renewed = try? thread.perform({ context throws(StoreError) in
                    try context.renewLeases(owner: owner, feeds: feeds, duration: duration)
                }) else { continue }  // the store is unreachable: the writes will say so
                let kept = Set(renewed.map(\.feed))
                let lost = Set(feeds).subtracting(kept)
                // A feed finished between the read and the renewal has no lease any more; only feeds still held count.
                let stillHeld = Set(schedule.heldLeases.map(\.feed))
                let taken = lost.intersection(stillHeld)
                if !taken.isEmpty { schedule.leasesLost(taken) }
            }
        }
        worker.name = "feedingest.renew"
        renewing.store(true, ordering: .sequentiallyConsistent)
        worker.start()
    }

    /// How long ``finish()`` keeps trying to release the leases when the store refuses (a restarting server).
    static let releaseRetryWindow = Duration.seconds(5)

    /// Stops renewing, releases every lease still held (feeds cancelled, or claimed and never fetched), and ends the
    /// store thread.
    func finish() {
        if renewing.load(ordering: .sequentiallyConsistent) {
            stopping.signal()
            renewerDone.wait()  // it uses the store thread: let it finish before the thread ends
        }
        let owner = self.owner
        // A database that is restarting (its sessions cut off) refuses the release for a moment; a lease left behind
        // would hold its feeds from every process, this one's next run included, until it expires. So retry for a
        // few seconds, then leave it to expire.
        let deadline = ContinuousClock.now + Self.releaseRetryWindow
        while (try? thread.perform({ context throws(StoreError) in try context.releaseLeases(owner: owner) })) == nil,
              ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.2)
        }
        thread.stop()
    }
}
