import Dispatch
import Foundation
import Support

/// Checkpoints an SQLite store's write-ahead log on a thread of its own, so that no context's thread waits for it.
///
/// Left to itself, SQLite checkpoints in the connection that commits, once the log holds `wal_autocheckpoint`
/// pages: that thread copies the log into the database and waits for two fsyncs. A store's last connection also
/// checkpoints the whole log when it closes, which at the end of a large ingest meant copying and syncing all of it
/// (tens of megabytes) after the last article. Instead, each read-write context's connection reports the log's size
/// after every commit (``SQLiteConnection/reportWALSize(to:)``), and once it holds
/// ``StoreConfiguration/walAutocheckpointPages`` this thread runs a passive checkpoint on a connection of its own.
/// A passive checkpoint takes no lock that a reader or a writer waits for, so the contexts commit on while it runs;
/// once it has copied everything, the next writer starts the log from its beginning again, so the file stays small.
///
/// A passive checkpoint completes only if no commit lands while it copies, and the log starts over only after a
/// complete one: under a writer that never pauses, the thread could fall behind for good and the log grow without
/// bound. So once the log holds ``lagPages`` (four times the threshold), the committing connection lets the thread's
/// checkpoint in progress finish (a second one would only find the lock taken) and checkpoints itself, passively,
/// between its commit and its next transaction, as SQLite's automatic checkpoint would have: that bounds the log as
/// it did, with the same limits (like it, it waits for no reader, and gives way to a checkpoint that another process,
/// or another `Store` on the same file, is running).
///
/// The thread starts with the first checkpoint due and ends when the last connection reporting to it goes (which
/// waits for it). Its connection closes first, so that context's connection is still this store's last in the
/// process and, if no other process has the file open, checkpoints what remains as it closes, as before.
/// Checkpoint errors are not reported: a checkpoint that could not copy everything leaves the rest in the log, where
/// every reader finds it and the next checkpoint takes it.
final class Checkpointer: Sendable {
    private let path: String
    private let configuration: StoreConfiguration
    /// The log's size, in pages, from which a checkpoint is due.
    let thresholdPages: Int
    /// The log's size, in pages, from which the committing connection checkpoints itself: the thread is behind.
    var lagPages: Int { thresholdPages * 4 }
    private let state = Lock(State())
    private let wake = DispatchSemaphore(value: 0)

    private struct State {
        /// Connections reporting to this checkpointer.
        var connections = 0
        /// The thread runs (or is starting).
        var running = false
        /// The thread was told to end, and has not yet.
        var stopping = false
        /// A checkpoint is due.
        var due = false
        /// Signalled by the thread when it has ended (its connection closed).
        var exited: DispatchSemaphore?
        /// A checkpoint is running: the thread's, or a committing connection's (see ``walHolds(pages:)``).
        var checkpointing = false
        /// Checkpoints of the thread that copied frames into the database (tests read it).
        var checkpoints = 0
        /// Checkpoints the committing connections ran because the thread was behind.
        var lagCheckpoints = 0
    }

    init(path: String, configuration: StoreConfiguration) {
        self.path = path
        self.configuration = configuration
        thresholdPages = max(configuration.walAutocheckpointPages, 1)
    }

    /// Checkpoints of this checkpointer's thread that copied frames into the database.
    var checkpoints: Int { state.withLock { $0.checkpoints } }

    /// Checkpoints the committing connections ran because the thread was behind.
    var lagCheckpoints: Int { state.withLock { $0.lagCheckpoints } }

    /// Whether no checkpoint is due or running.
    var isIdle: Bool { state.withLock { !$0.due && !$0.checkpointing } }

    /// A connection starts reporting to this checkpointer.
    func attach() {
        state.withLock { $0.connections += 1 }
    }

    /// A connection stops reporting; the last one ends the thread and waits until it has (its connection closed).
    /// A later connection starts it again when a checkpoint is next due.
    func detach() {
        let exited = state.withLock { state -> DispatchSemaphore? in
            state.connections -= 1
            guard state.connections == 0, state.running else { return nil }
            state.running = false
            state.stopping = true
            return state.exited
        }
        guard let exited else { return }
        wake.signal()
        exited.wait()
        // The thread may have ended with a checkpoint due: forget it, or no later commit would start the thread again.
        state.withLock { state in
            state.stopping = false
            state.due = false
            state.checkpointing = false
        }
    }

    /// Called by SQLite on the committing thread, after each commit of a reporting connection: the log now holds
    /// `pages` pages. Starts the thread, or wakes it, when a checkpoint is due, and returns `false` at once.
    ///
    /// When the log holds ``lagPages``, it waits for the thread's checkpoint in progress, if any (a passive checkpoint
    /// waits for no lock, so it ends), keeps the thread from starting another, and returns `true`: the committing
    /// connection checkpoints itself, then calls ``committerCheckpointEnded()``.
    func walHolds(pages: Int) -> Bool {
        guard pages >= thresholdPages else { return false }
        if pages >= lagPages {
            while true {
                let claimed = state.withLock { state -> Bool in
                    guard !state.checkpointing else { return false }
                    state.checkpointing = true
                    state.lagCheckpoints += 1
                    return true
                }
                if claimed { return true }
                usleep(1_000)
            }
        }
        enum Action { case none, wake, start(DispatchSemaphore) }
        let action = state.withLock { state -> Action in
            guard !state.stopping, state.connections > 0, !state.due else { return .none }
            state.due = true
            if state.running { return .wake }
            state.running = true
            let exited = DispatchSemaphore(value: 0)
            state.exited = exited
            return .start(exited)
        }
        switch action {
        case .none: break
        case .wake: wake.signal()
        case .start(let exited): start(exited)
        }
        return false
    }

    /// The committing connection's own checkpoint (``walHolds(pages:)`` returned `true`) has ended: the thread may
    /// checkpoint again.
    func committerCheckpointEnded() {
        let wakeThread = state.withLock { state -> Bool in
            state.checkpointing = false
            return state.due && state.running
        }
        if wakeThread { wake.signal() }
    }

    private func start(_ exited: DispatchSemaphore) {
        let thread = Thread { [self] in
            defer { exited.signal() }
            // Its own connection, made, used and closed on this thread. If it cannot open, the log waits for the
            // last connection's close (or the next run): nothing is lost.
            var connection = try? SQLiteEngine.open(path: path, configuration: configuration, create: false)
            while true {
                enum Job { case stop, checkpoint, wait }
                let job = state.withLock { state -> Job in
                    if state.stopping { return .stop }
                    if state.due && !state.checkpointing {  // not while a committing connection checkpoints itself
                        state.due = false
                        state.checkpointing = true
                        return .checkpoint
                    }
                    return .wait
                }
                switch job {
                case .stop:
                    connection = nil
                    return
                case .checkpoint:
                    let copied = (try? connection?.checkpointPassively()) ?? 0
                    state.withLock { state in
                        state.checkpointing = false
                        if copied > 0 { state.checkpoints += 1 }
                    }
                case .wait:
                    wake.wait()
                }
            }
        }
        thread.name = "feedingest.checkpoint"
        thread.start()
    }
}
