import ArticleStore
import Dispatch
import Scheduling
import Syndication

/// How an ``IngestPipeline`` runs; every field has a working default.
public struct IngestConfiguration: Sendable {
    /// Worker threads, and so feeds in flight at once (each worker fetches and parses one feed at a time, and its own
    /// store thread stores that feed's articles through its own store context). Default 8.
    public var jobs: Int = 8
    /// How feeds are parsed; the response's charset is added as the hint when this sets none.
    public var parser = FeedParserConfiguration()
    /// The one serial queue observers are called on. Default: a private serial queue. Give `DispatchQueue.main`
    /// only when the main thread keeps running its queue while ``IngestPipeline/run(_:)`` blocks another thread.
    public var eventQueue = DispatchQueue(label: "feedingest.ingest.events")
    /// Which feeds are fetched, by their stored next allowed fetch; the others are reported as
    /// ``FeedResult/deferred(until:)`` without a request. Default ``DuePolicy/scheduled`` (the schedule, as `watch`
    /// keeps it); an explicit one-shot run takes ``DuePolicy/unlessAskedToWait``, `--force` ``DuePolicy/always``.
    public var due: DuePolicy = .scheduled
    /// Transfers started ahead of the workers, so that slow servers overlap: while ``jobs`` workers parse and store,
    /// up to this many further feeds are already downloading (each pauses once `FetchConfiguration.maximumBufferedBytes`
    /// wait for their worker). Those still receiving stay within the fetcher's `maximumConnectionsPerHost` per host and
    /// its `maximumConcurrentTransfers` minus one per worker (a paused transfer keeps its connection, and a worker must
    /// always find room for the feed it claims), so raise `maximumConcurrentTransfers` to `jobs + transfersAhead` for
    /// this many in flight. Default 64; 0 starts each transfer only when its worker claims the feed.
    public var transfersAhead = 64
    /// With a store, feeds are fetched under leases (see ``IngestPipeline``): how long a lease lasts unless renewed.
    /// `nil` (the default) for twice the fetcher's `totalTimeout`: a small multiple of the longest a transfer may take,
    /// renewed every third of it while the feed is held (queued, downloading, parsing, storing), so only a process
    /// that stalls or dies loses its feeds, and another process takes them over once the lease has expired.
    public var leaseDuration: Duration?
    /// Claim feeds under leases when there is a store (the default); `false` fetches every listed feed that is due
    /// without claiming it, as a store with one writer may.
    public var usesLeases = true

    /// Creates the default configuration.
    public init() {}
}
