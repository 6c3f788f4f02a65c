import CCurl
import Foundation
import Support

/// Counters a ``Fetcher`` keeps about its transfers.
public struct FetcherStatistics: Sendable, Hashable {
    /// Transfers running in the multi handle now.
    public var activeTransfers = 0
    /// Transfers waiting for a free slot (``FetchConfiguration/maximumConcurrentTransfers``).
    public var waitingTransfers = 0
    /// The most transfers that ran at once.
    public var peakActiveTransfers = 0
    /// Transfers started in the multi handle.
    public var startedTransfers = 0
    /// Transfers that ended, however they ended.
    public var finishedTransfers = 0
    /// New connections opened (the sum of `CURLINFO_NUM_CONNECTS`); fewer than finished transfers means reuse.
    public var connectionsOpened = 0
    /// Failed calls of libcurl's multi interface (`curl_multi_perform`, `_poll`, `_wakeup`, `_cleanup`, …). The
    /// transfers such a failure touched failed with ``FetchError/Kind/libraryFailure``; a failed wakeup touches none
    /// (the transfer thread then notices new work at its next poll timeout, within a second) and is known only here.
    public var libcurlFailures = 0
    /// The most recent of those failures.
    public var lastLibcurlFailure: CurlMultiError?
}

/// The transfer thread of a ``Fetcher``: one libcurl multi handle driving every transfer.
///
/// Other threads talk to it only through the inbox (under a lock) and `curl_multi_wakeup`; the multi handle, the easy
/// handles and everything about them live in a ``LoopRunner`` that only the transfer thread touches.
final class TransferLoop: Sendable {
    struct Inbox {
        var submitted: [FetchTransfer] = []
        var cancelled: [UInt64] = []
        var resumed: [UInt64] = []
        var shuttingDown = false
        /// Whether the transfer thread was started (on the first network transfer).
        var started = false
    }

    let configuration: FetchConfiguration
    let inbox = Lock(Inbox())
    let wake = CurlWakeup()
    let statistics = Lock(FetcherStatistics())
    /// The transfer thread, until the ``shutdown()`` that joins it takes it.
    private let thread = Lock<pthread_t?>(nil)
    /// The transfer thread, for good.
    private let loopThread = Lock<pthread_t?>(nil)
    /// Signalled (and re-signalled by each waiter) once the thread has cleaned up libcurl: for a second ``shutdown()``
    /// while the first still joins, or after the thread detached itself.
    private let ended = DispatchSemaphore(value: 0)

    init(configuration: FetchConfiguration) {
        self.configuration = configuration
    }

    /// Starts the transfer thread: a POSIX thread rather than a Foundation `Thread`, because ``shutdown()`` must join
    /// it (see there). Called by ``submit(_:)`` for the first transfer, so a fetcher that only reads local files never
    /// starts a thread nor initialises libcurl.
    private func start() {
        let name = String(configuration.threadName.utf8.prefix(15)) ?? "feedingest.fetch"
        let body = Unmanaged.passRetained(ThreadBody { [self] in
            loopThread.withLock { $0 = pthread_self() }  // before anything here could release the fetcher
            Thread.current.name = name  // set from the thread itself: Foundation passes it on to the system on Linux
            LoopRunner(loop: self).run()
            ended.signal()
        })
        var id = pthread_t()
        let created = pthread_create(&id, nil, { argument in
            Unmanaged<ThreadBody>.fromOpaque(argument!).takeRetainedValue().run()
            return nil
        }, body.toOpaque())
        guard created == 0 else {
            // No thread to be had (the process is out of them): every transfer fails at once, as after shutdown,
            // those already submitted included.
            body.release()
            let stranded = inbox.withLock { inbox -> [FetchTransfer] in
                inbox.shuttingDown = true
                defer { inbox.submitted.removeAll() }
                return inbox.submitted
            }
            for transfer in stranded {
                let error = FetchError(kind: .cancelled, message: "no transfer thread could be started (errno \(created))",
                                       url: transfer.request.urlString)
                transfer.channel.complete(TransferCompletion(curlMessage: error.message, abort: error))
            }
            ended.signal()
            return
        }
        thread.withLock { $0 = id }
    }

    func submit(_ transfer: FetchTransfer) {
        let (accepted, starts) = inbox.withLock { inbox -> (Bool, Bool) in
            guard !inbox.shuttingDown else { return (false, false) }
            inbox.submitted.append(transfer)
            defer { inbox.started = true }
            return (true, !inbox.started)
        }
        if starts { start() }  // the thread reads the inbox once it runs, so this transfer is not missed
        guard accepted else {
            // The thread is gone, or reads its inbox one last time under the same lock: fail here, never hang.
            let error = FetchError(kind: .cancelled, message: "the fetcher was shut down", url: transfer.request.urlString)
            transfer.channel.complete(TransferCompletion(curlMessage: error.message, abort: error))
            return
        }
        wakeTransferThread()
    }

    func cancel(_ id: UInt64) {
        inbox.withLock { $0.cancelled.append(id) }
        wakeTransferThread()
    }

    /// Asks the transfer thread to unpause a transfer whose consumer caught up.
    func resume(_ id: UInt64) {
        inbox.withLock { $0.resumed.append(id) }
        wakeTransferThread()
    }

    /// Interrupts the transfer thread's poll so it reads the inbox now. A failed wakeup loses no work, only time (the
    /// thread polls with a timeout of a second), so it is counted in the statistics rather than failing a transfer.
    private func wakeTransferThread() {
        do { try wake.wakeup() } catch { noteLibcurlFailure(error) }
    }

    /// Counts a failed multi-interface call (``FetcherStatistics/libcurlFailures``).
    func noteLibcurlFailure(_ error: CurlMultiError) {
        statistics.withLock {
            $0.libcurlFailures += 1
            $0.lastLibcurlFailure = error
        }
    }

    /// Ends the thread: transfers still running fail with ``FetchError/Kind/cancelled``. Joins it, unless called on
    /// that thread: a process that exits while the thread still cleans up libcurl (closing TLS connections, OpenSSL's
    /// per-thread state at thread exit) races OpenSSL's own clean-up at exit, and crashed about once in 150 runs.
    func shutdown() {
        let started = inbox.withLock { inbox -> Bool in
            inbox.shuttingDown = true
            return inbox.started
        }
        guard started else { return }  // no thread, nothing to wait for; later submissions fail as cancelled
        wakeTransferThread()
        guard let running = thread.withLock({ id -> pthread_t? in defer { id = nil }; return id }) else {
            // Another call took the thread: wait until it has cleaned up, unless this is the thread itself.
            if !isTransferThread {
                ended.wait()
                ended.signal()
            }
            return
        }
        if pthread_equal(running, pthread_self()) != 0 {
            pthread_detach(running)  // released on its own thread: it ends by itself
        } else {
            pthread_join(running, nil)  // libcurl, OpenSSL's per-thread state and the thread itself are gone after this
        }
    }

    /// Whether the calling thread is the transfer thread.
    private var isTransferThread: Bool {
        loopThread.withLock { $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }
}

extension FetchError {
    /// A ``Kind/libraryFailure`` for a failed multi-interface call.
    static func libraryFailure(_ error: CurlMultiError, url: String, message: String? = nil) -> FetchError {
        FetchError(kind: .libraryFailure, message: message ?? "libcurl: \(error)", url: url, curlMultiCode: error.code, underlying: error)
    }
}

/// What the transfer thread runs.
private final class ThreadBody {
    let run: () -> Void

    init(_ run: @escaping () -> Void) {
        self.run = run
    }
}

/// The state of the transfer thread; created, used and freed on that thread only.
private final class LoopRunner {
    let loop: TransferLoop
    let configuration: FetchConfiguration
    var multi: CurlMulti?
    var active: [UInt64: EasyTransfer] = [:]
    var byHandle: [UnsafeMutableRawPointer: EasyTransfer] = [:]
    var waiting: [FetchTransfer] = []
    var waitingStart = 0

    init(loop: TransferLoop) {
        self.loop = loop
        configuration = loop.configuration
    }

    func run() {
        var setupFailure: FetchError?
        if CurlGlobal.initialization != .ok {
            setupFailure = FetchError(kind: .network, message: "libcurl could not be set up: curl_global_init failed", url: "",
                                      curlCode: CurlGlobal.initialization)
        } else {
            do throws(CurlMultiError) {
                let multi = try CurlMulti()
                self.multi = multi  // closed at the end of run() even when an option below fails
                try multi.set(CURLMOPT_PIPELINING, configuration.usesHTTP2Multiplexing ? Int(CURLPIPE_MULTIPLEX) : 0, "CURLMOPT_PIPELINING")
                try multi.set(CURLMOPT_MAX_HOST_CONNECTIONS, max(0, configuration.maximumConnectionsPerHost), "CURLMOPT_MAX_HOST_CONNECTIONS")
                try multi.set(CURLMOPT_MAXCONNECTS, max(1, configuration.maximumCachedConnections), "CURLMOPT_MAXCONNECTS")
                loop.wake.open(multi)
            } catch {
                loop.noteLibcurlFailure(error)
                setupFailure = FetchError.libraryFailure(error, url: "", message: "libcurl could not be set up: \(error)")
            }
        }
        if setupFailure != nil, let multi {
            do throws(CurlMultiError) { try multi.close() } catch { loop.noteLibcurlFailure(error) }
            self.multi = nil
        }
        while true {
            let work = loop.inbox.withLock { inbox -> TransferLoop.Inbox in
                defer {
                    inbox.submitted = []
                    inbox.cancelled = []
                    inbox.resumed = []
                }
                return inbox
            }
            waiting.append(contentsOf: work.submitted)
            if let setupFailure {
                for transfer in waiting[waitingStart...] { fail(transfer, setupFailure) }
                waiting = []
                waitingStart = 0
            }
            for id in work.cancelled { cancel(id) }
            for id in work.resumed { resume(id) }
            if work.shuttingDown { break }
            let added = startWaiting()
            guard let multi else {
                // Nothing can run; sleep until the next submission or shutdown.
                Thread.sleep(forTimeInterval: 0.05)
                continue
            }
            do throws(CurlMultiError) { try multi.perform() } catch { failRunning(error) }
            var finishedAny = false
            while let (handle, code) = multi.nextFinished() {
                finish(handle, code)
                finishedAny = true
            }
            updateStatistics()
            if added || (finishedAny && waitingStart < waiting.count) { continue }
            do throws(CurlMultiError) { try multi.poll(timeoutMilliseconds: 1000) } catch {
                // Nothing can be waited for: fail what runs, and pause briefly so a lasting failure does not spin.
                failRunning(error)
                updateStatistics()
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        // Shutting down: every transfer still here is cancelled.
        let shutdown = FetchError(kind: .cancelled, message: "the fetcher was shut down", url: "")
        for transfer in waiting[waitingStart...] { fail(transfer, shutdown) }
        for easy in Array(active.values) { stop(easy, shutdown) }
        loop.wake.close()
        updateStatistics()
        do throws(CurlMultiError) { try multi?.close() } catch { loop.noteLibcurlFailure(error) }
        multi = nil
    }

    /// A multi-interface call that concerns every running transfer failed: each of them fails with it.
    private func failRunning(_ error: CurlMultiError) {
        loop.noteLibcurlFailure(error)
        for easy in Array(active.values) {
            stop(easy, FetchError.libraryFailure(error, url: easy.transfer.request.urlString))
        }
    }

    /// Unpauses a transfer whose consumer caught up; when libcurl cannot (the held-back delivery failed), the
    /// transfer stops with libcurl's code (or its own limit error, when its write callback refused the bytes).
    private func resume(_ id: UInt64) {
        guard let easy = active[id] else { return }
        do throws(CurlEasyError) { try easy.easy.resume() } catch {
            stop(easy, FetchError(kind: .network, message: "resuming the paused transfer failed: \(easy.easy.message(for: error.code))",
                                  url: easy.transfer.request.urlString, curlCode: error.code))
        }
    }

    /// Moves waiting transfers into the multi handle while there is room. Returns whether it added any.
    private func startWaiting() -> Bool {
        guard let multi else { return false }
        var added = false
        while active.count < max(1, configuration.maximumConcurrentTransfers) && waitingStart < waiting.count {
            let transfer = waiting[waitingStart]
            waitingStart += 1
            if transfer.channel.isCancelled {
                fail(transfer, FetchError(kind: .cancelled, message: "cancelled", url: transfer.request.urlString))
                continue
            }
            let easy: EasyTransfer
            do throws(CurlEasyError) {
                easy = try EasyTransfer(transfer: transfer, configuration: configuration)
            } catch {
                fail(transfer, FetchError(kind: .invalidURL, message: "libcurl refused \(error.what): \(error.code)",
                                          url: transfer.request.urlString, curlCode: error.code))
                continue
            }
            do throws(CurlMultiError) {
                try multi.add(easy.easy)
                active[transfer.id] = easy
                byHandle[easy.easy.handle] = easy
                loop.statistics.withLock {
                    $0.startedTransfers += 1
                    $0.peakActiveTransfers = max($0.peakActiveTransfers, active.count)
                }
                added = true
            } catch {
                loop.noteLibcurlFailure(error)
                fail(transfer, FetchError.libraryFailure(error, url: transfer.request.urlString))
            }
        }
        // Started transfers must not stay referenced here: each holds its fetcher, so the fetcher (and this thread)
        // would outlive its last user.
        if waitingStart == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            waitingStart = 0
        } else if waitingStart > 64 && waitingStart * 2 > waiting.count {
            waiting.removeFirst(waitingStart)
            waitingStart = 0
        }
        return added
    }

    private func cancel(_ id: UInt64) {
        if let easy = active[id] {
            stop(easy, FetchError(kind: .cancelled, message: "cancelled", url: easy.transfer.request.urlString))
        } else if let index = waiting[waitingStart...].firstIndex(where: { $0.id == id }) {
            let transfer = waiting.remove(at: index)
            fail(transfer, FetchError(kind: .cancelled, message: "cancelled", url: transfer.request.urlString))
        }
    }

    /// Removes a running transfer from the multi handle and reports it stopped for `reason` (a failed removal is
    /// counted in the statistics: the transfer fails anyway).
    private func stop(_ easy: EasyTransfer, _ reason: FetchError) {
        _ = detach(easy)
        var completion = easy.completion(code: .abortedByCallback)
        completion.abort = completion.abort ?? reason
        forget(easy)
        easy.transfer.channel.complete(completion)
    }

    private func finish(_ handle: UnsafeMutableRawPointer, _ code: CurlCode) {
        guard let easy = byHandle[handle] else { return }
        let removal = detach(easy)
        var completion = easy.completion(code: code)
        if let removal {
            completion.abort = completion.abort ?? FetchError.libraryFailure(removal, url: easy.transfer.request.urlString)
        }
        forget(easy)
        loop.statistics.withLock { $0.connectionsOpened += completion.newConnections }
        easy.transfer.channel.complete(completion)
    }

    /// `curl_multi_remove_handle`; its failure, counted, if it failed. The easy handle is freed right after either
    /// way, and `curl_easy_cleanup` takes it out of a multi handle it is still in.
    private func detach(_ easy: EasyTransfer) -> CurlMultiError? {
        do throws(CurlMultiError) {
            try multi?.remove(easy.easy)
            return nil
        } catch {
            loop.noteLibcurlFailure(error)
            return error
        }
    }

    private func forget(_ easy: EasyTransfer) {
        active[easy.transfer.id] = nil
        byHandle[easy.easy.handle] = nil
        loop.statistics.withLock { $0.finishedTransfers += 1 }
    }

    private func fail(_ transfer: FetchTransfer, _ error: FetchError) {
        var error = error
        if error.url.isEmpty { error.url = transfer.request.urlString }
        loop.statistics.withLock { $0.finishedTransfers += 1 }
        transfer.channel.complete(TransferCompletion(curlCode: error.curlCode ?? .ok, curlMessage: error.message, abort: error))
    }

    private func updateStatistics() {
        let activeCount = active.count, waitingCount = waiting.count - waitingStart
        loop.statistics.withLock {
            $0.activeTransfers = activeCount
            $0.waitingTransfers = waitingCount
        }
    }
}

/// One transfer on the transfer thread: its easy handle, the headers seen so far, and its redirect chain.
private final class EasyTransfer: CurlEasyDelegate {
    let transfer: FetchTransfer
    let easy: CurlEasy
    let maximumBodyBytes: Int64
    /// The response whose headers are arriving (the final one, once the body starts).
    private var status = 0
    private var headers = HTTPHeaders()
    private var headerBytes = 0
    private var currentURL: URL
    private var redirects: [Redirect] = []
    private var bodyStarted = false
    private var deliversBody = false
    private var bodyBytes: Int64 = 0
    private var abort: FetchError?

    /// The most header bytes accepted per response; libcurl caps single lines, this caps their number.
    private static let maximumHeaderBytes = 256 << 10

    init(transfer: FetchTransfer, configuration c: FetchConfiguration) throws(CurlEasyError) {
        self.transfer = transfer
        currentURL = transfer.request.url
        maximumBodyBytes = transfer.request.maximumBodyBytes ?? c.maximumBodyBytes
        easy = try CurlEasy()
        easy.delegate = self
        let request = transfer.request
        try easy.set(CURLOPT_URL, request.urlString, "CURLOPT_URL")
        // Only http and https, for the first request and every redirect (https://curl.se/libcurl/c/CURLOPT_PROTOCOLS_STR.html).
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https", "CURLOPT_PROTOCOLS_STR")
        try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https", "CURLOPT_REDIR_PROTOCOLS_STR")
        try easy.set(CURLOPT_FOLLOWLOCATION, 1, "CURLOPT_FOLLOWLOCATION")
        try easy.set(CURLOPT_MAXREDIRS, max(0, c.maximumRedirects), "CURLOPT_MAXREDIRS")
        // Signals are not thread-safe; the threaded resolver times out without them.
        try easy.set(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        try easy.set(CURLOPT_USERAGENT, c.userAgent, "CURLOPT_USERAGENT")
        // Decompression is ours, so its limits hold: ask for gzip and deflate by hand, and keep libcurl from decoding
        // (CURLOPT_ACCEPT_ENCODING would decode inside libcurl, where decoded bytes cannot be capped).
        try easy.set(CURLOPT_HTTP_CONTENT_DECODING, 0, "CURLOPT_HTTP_CONTENT_DECODING")
        // A download asks for the bytes as stored: a range counts those (RFC 9110, section 14.1.2).
        var lines = ["Accept: \(request.accept ?? c.accept)",
                     request.deliversIdentity ? "Accept-Encoding: identity" : "Accept-Encoding: gzip, deflate"]
        if let tag = request.validators.entityTag { lines.append("If-None-Match: \(tag)") }
        if let date = request.validators.lastModified { lines.append("If-Modified-Since: \(date)") }
        if let range = request.byteRange, range.offset > 0 {
            lines.append("Range: bytes=\(range.offset)-")
            if let validator = range.validator { lines.append("If-Range: \(validator)") }
        }
        try easy.setHeaders(lines)
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, max(1, c.connectTimeout.millisecondsRoundedUp), "CURLOPT_CONNECTTIMEOUT_MS")
        let total = request.totalTimeout ?? c.totalTimeout
        // 0 is libcurl's "no timeout" (https://curl.se/libcurl/c/CURLOPT_TIMEOUT_MS.html): only when asked for.
        try easy.set(CURLOPT_TIMEOUT_MS, total == .zero ? 0 : max(1, total.millisecondsRoundedUp), "CURLOPT_TIMEOUT_MS")
        if let rate = request.maximumReceiveRate, rate > 0 {
            // https://curl.se/libcurl/c/CURLOPT_MAX_RECV_SPEED_LARGE.html: libcurl keeps the average below it.
            try easy.set(CURLOPT_MAX_RECV_SPEED_LARGE, offset: rate, "CURLOPT_MAX_RECV_SPEED_LARGE")
        }
        if c.lowSpeedLimit > 0 {
            try easy.set(CURLOPT_LOW_SPEED_LIMIT, c.lowSpeedLimit, "CURLOPT_LOW_SPEED_LIMIT")
            try easy.set(CURLOPT_LOW_SPEED_TIME, max(1, c.lowSpeedTime.millisecondsRoundedUp / 1000), "CURLOPT_LOW_SPEED_TIME")
        }
        // An announced Content-Length above the limit is refused before the body starts; the write callback counts
        // the rest (libcurl 7.88 does not stop a transfer that grows past it).
        try easy.set(CURLOPT_MAXFILESIZE_LARGE, offset: maximumBodyBytes, "CURLOPT_MAXFILESIZE_LARGE")
        try easy.set(CURLOPT_BUFFERSIZE, max(1024, min(c.receiveBufferSize, 10 << 20)), "CURLOPT_BUFFERSIZE")
        try easy.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS, "CURLOPT_HTTP_VERSION")
        // Wait for a connection that may multiplex rather than open another, but only over TLS, the one place HTTP/2 is
        // negotiated: over plain http a transfer told to wait can end up queued behind a busy HTTP/1.1 connection.
        if c.usesHTTP2Multiplexing && request.scheme == "https" { try easy.set(CURLOPT_PIPEWAIT, 1, "CURLOPT_PIPEWAIT") }
        if let file = c.certificateAuthorityFile { try easy.set(CURLOPT_CAINFO, file, "CURLOPT_CAINFO") }
    }

    // MARK: CurlEasyDelegate

    func curlHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        headerBytes += line.count
        guard headerBytes <= Self.maximumHeaderBytes else {
            abort = FetchError(kind: .network, message: "response headers exceed \(Self.maximumHeaderBytes) bytes",
                               url: transfer.request.urlString)
            return false
        }
        // Drop the line's CR LF as bytes: as a String, "\r\n" is one Character and would not match "\n".
        var end = line.count
        while end > 0 && (line[end - 1] == 0x0A || line[end - 1] == 0x0D) { end -= 1 }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: line[0..<end]), as: UTF8.self)
        if text.hasPrefix("HTTP/") {
            // A new response starts: the previous one, if it was a redirect, is a hop of the chain.
            if let hop = redirectHop() {
                redirects.append(hop)
                currentURL = URL(string: hop.location) ?? currentURL
            }
            let parts = text.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            headers = HTTPHeaders()
            headerBytes = line.count
        } else if text.isEmpty {
            // The end of one response's headers.
        } else if text.first == " " || text.first == "\t" {
            headers.appendToLast(text.trimmingCharacters(in: .whitespaces))
        } else if let colon = text.firstIndex(of: ":") {
            headers.append(name: String(text[..<colon]).trimmingCharacters(in: .whitespaces),
                           value: String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        return true
    }

    func curlBody(_ bytes: UnsafeRawBufferPointer) -> CurlWriteDecision {
        if !bodyStarted {
            bodyStarted = true
            status = easy.responseCode
            deliversBody = (200..<300).contains(status)
            if deliversBody { transfer.channel.publish(response()) }
        }
        let total = bodyBytes + Int64(bytes.count)
        if total > maximumBodyBytes {
            abort = FetchError(kind: .tooLarge(.bodyBytes),
                               message: "the body exceeds the limit of \(maximumBodyBytes) bytes on the wire",
                               url: transfer.request.urlString, status: status)
            return .abort
        }
        // The body of an error response is not wanted; it is read (and counted) only so the connection stays usable.
        let decision = deliversBody ? transfer.channel.offer(bytes) : .accept
        // A paused chunk is offered again by libcurl later: counted once, when taken.
        if decision != .pause { bodyBytes = total }
        return decision
    }

    // MARK: Results

    private func redirectHop() -> Redirect? {
        guard (300..<400).contains(status), status != 304, let location = headers["Location"] else { return nil }
        let resolved = URL(string: location, relativeTo: currentURL)?.absoluteURL.absoluteString ?? location
        return Redirect(status: status, from: currentURL, location: resolved)
    }

    private func response() -> FetchResponse {
        let url = easy.effectiveURL.flatMap { URL(string: $0) } ?? currentURL
        let version: String?
        switch easy.httpVersion {
        case CURL_HTTP_VERSION_1_0: version = "1.0"
        case CURL_HTTP_VERSION_1_1: version = "1.1"
        case CURL_HTTP_VERSION_2_0: version = "2"
        case CURL_HTTP_VERSION_3: version = "3"
        default: version = nil
        }
        return FetchResponse(status: status, headers: headers, url: url, httpVersion: version)
    }

    func completion(code: CurlCode) -> TransferCompletion {
        var completion = TransferCompletion(curlCode: code, curlMessage: code == .ok ? "" : easy.message(for: code))
        completion.abort = abort
        if code != .ok { completion.systemError = easy.systemError }
        if status > 0 {
            if !bodyStarted { status = easy.responseCode == 0 ? status : easy.responseCode }
            completion.response = response()
        }
        completion.redirects = redirects
        // A redirect that was not followed (too many, or to a refused scheme) ends the chain.
        if code != .ok, let hop = redirectHop() { completion.redirects.append(hop) }
        completion.newConnections = easy.newConnections
        completion.bodyBytes = bodyBytes
        return completion
    }
}
