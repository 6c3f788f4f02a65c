import Foundation
import Support

/// The consumer side of one transfer: decompresses, hashes, enforces the decoded limits, feeds the consumer, and
/// turns the transfer thread's completion into a ``FetchResult``.
///
/// Used by one thread at a time (see ``FetchTransfer/deliver(to:)``), so deliberately not `Sendable`.
final class Delivery {
    let transfer: FetchTransfer
    let consumer: any FetchConsumer
    private let configuration: FetchConfiguration
    private var response: FetchResponse?
    private var inflater: Inflater?
    private var contentEncoding: String?
    /// No `Content-Encoding` was given (or the source is a local file): the first two bytes tell whether the body is gzip
    /// anyway, by its magic number (1F 8B).
    private var sniffsGzip = false
    /// The first byte, held while a one-byte first piece cannot tell gzip yet.
    private var sniffedByte: UInt8?
    /// The consumer failed on inflated bytes: the compressed stream is still read to its end, its output discarded,
    /// because damaged data decodes to garbage the consumer may refuse before zlib can tell the damage. The failure
    /// stands unless the stream proves damaged (``FetchError/Kind/decompression``, which then wins).
    private var consumerFailureWhileInflating: FetchError?
    private var hasher: SHA256?
    private var bodyBytes: Int64 = 0
    private var decodedBytes: Int64 = 0
    /// ``decodedBytes`` when the consumer last heard ``FetchConsumer/fetchWillWait()``.
    private var decodedBytesAtLastWait: Int64 = 0
    private var failure: FetchError?

    init(transfer: FetchTransfer, consumer: any FetchConsumer) {
        self.transfer = transfer
        self.consumer = consumer
        configuration = transfer.configuration
        hasher = configuration.computesBodyHash ? SHA256() : nil
    }

    private var url: String { transfer.request.urlString }

    /// Handles everything that waits; returns the result once the transfer has ended, or `nil` when it parked.
    func drain() -> FetchResult? {
        while let batch = transfer.channel.take() {
            if batch.resume { transfer.loop?.resume(transfer.id) }
            if let response = batch.response { begin(response) }
            for chunk in batch.chunks {
                chunk.withUnsafeBytes { process($0) }
            }
            if let completion = batch.completion { return finish(completion) }
            willWait()
        }
        return nil
    }

    /// Tells the consumer that what arrived is delivered (``FetchConsumer/fetchWillWait()``), when it was given bytes
    /// since it last heard so: a piece that decoded to nothing (a gzip header split across pieces) is no news.
    private func willWait() {
        guard failure == nil, consumerFailureWhileInflating == nil, decodedBytes > decodedBytesAtLastWait else { return }
        decodedBytesAtLastWait = decodedBytes
        consumer.fetchWillWait()
    }

    // MARK: The body

    private func begin(_ response: FetchResponse) {
        guard self.response == nil else { return }
        self.response = response
        guard failure == nil else { return }
        if let error = hasher?.error {
            // libcrypto could not even start a hash: fail before the consumer sees a byte, rather than at the end.
            fail(hashError(error))
            return
        }
        let encodings = response.contentEncodings
        switch encodings {
        case []:
            // A gzip file served without `Content-Encoding` (a `.xml.gz` as application/octet-stream, a misconfigured
            // server) is inflated all the same; a download keeps the bytes as they are.
            sniffsGzip = !transfer.request.deliversIdentity
        case _ where transfer.request.deliversIdentity:
            // A download keeps the bytes as the server stores them (a range counts those); nothing is decoded.
            break
        case ["gzip"], ["x-gzip"]:
            inflater = makeInflater(.gzip)
            contentEncoding = "gzip"
        case ["deflate"]:
            inflater = makeInflater(.httpDeflate)
            contentEncoding = "deflate"
        default:
            fail(FetchError(kind: .badContentEncoding,
                            message: "unsupported Content-Encoding '\(encodings.joined(separator: ", "))' (only gzip and deflate were asked for)",
                            url: url, status: response.status))
            return
        }
        do {
            try consumer.fetchDidReceiveResponse(response)
        } catch {
            fail(consumerError(error))
        }
    }

    private func makeInflater(_ format: Inflater.Format) -> Inflater {
        Inflater(format: format, limits: Inflater.Limits(
            maximumOutputBytes: configuration.maximumDecodedBytes, maximumRatio: configuration.maximumInflationRatio,
            ratioActivationBytes: configuration.inflationRatioActivationBytes))
    }

    private func process(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, !bytes.isEmpty else { return }
        bodyBytes += Int64(bytes.count)
        hasher?.update(bytes)
        if sniffsGzip {
            // However the body was split: a first piece of one byte waits for the second.
            guard sniffedByte != nil || bytes.count >= 2 else {
                sniffedByte = bytes[0]
                return
            }
            sniffsGzip = false
            let first = sniffedByte ?? bytes[0]
            let second = sniffedByte == nil ? bytes[1] : bytes[0]
            if first == 0x1F && second == 0x8B {
                inflater = makeInflater(.gzip)
                contentEncoding = "gzip"
            }
            if let held = sniffedByte {
                sniffedByte = nil
                withUnsafeBytes(of: held) { decode($0) }
            }
        }
        decode(bytes)
    }

    /// Inflates body bytes, when the body is compressed, and delivers the result.
    private func decode(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        guard let inflater else {
            _ = deliver(bytes)
            return
        }
        do {
            try inflater.inflate(bytes) { self.deliver($0) }
        } catch {
            failInflating(error)
        }
    }

    /// Fails with an inflater's error; while the consumer's own failure waits for the end of the compressed stream,
    /// only damaged data replaces it.
    private func failInflating(_ error: InflateError) {
        if let pending = consumerFailureWhileInflating {
            switch error.kind {
            case .corrupt, .trailingData: fail(inflateError(error))
            default: fail(pending)
            }
            return
        }
        fail(inflateError(error))
    }

    /// Hands decoded bytes to the consumer; `false` stops the inflater.
    private func deliver(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if consumerFailureWhileInflating != nil { return true }  // only checking the compressed stream now
        decodedBytes += Int64(bytes.count)
        let limit = transfer.request.maximumBodyBytes.map { max($0, configuration.maximumDecodedBytes) } ?? configuration.maximumDecodedBytes
        if decodedBytes > limit {
            fail(FetchError(kind: .tooLarge(.decodedBytes),
                            message: "the decoded body exceeds the limit of \(limit) bytes",
                            url: url, status: response?.status))
            return false
        }
        do {
            try consumer.fetchDidReceive(bytes)
        } catch {
            if inflater != nil {
                consumerFailureWhileInflating = consumerError(error)
                return true
            }
            fail(consumerError(error))
            return false
        }
        return true
    }

    private func fail(_ error: FetchError) {
        guard failure == nil else { return }
        failure = error
        transfer.channel.stop()
        transfer.loop?.cancel(transfer.id)
    }

    private func consumerError(_ error: any Error) -> FetchError {
        FetchError(kind: .consumerFailed, message: "the consumer stopped: \(error)", url: url, status: response?.status, underlying: error)
    }

    private func hashError(_ error: HashError) -> FetchError {
        FetchError(kind: .libraryFailure, message: "hashing the body (SHA-256) failed: \(error)", url: url, status: response?.status,
                   underlying: error)
    }

    private func inflateError(_ error: InflateError) -> FetchError {
        let kind: FetchError.Kind
        switch error.kind {
        case .outputLimitExceeded: kind = .tooLarge(.decodedBytes)
        case .ratioLimitExceeded: kind = .tooLarge(.inflationRatio)
        case .truncated: kind = .truncated
        case .corrupt, .trailingData: kind = .decompression
        case .noMemory, .streamError: kind = .libraryFailure
        }
        let encoding = contentEncoding ?? "compressed"
        return FetchError(kind: kind, message: "\(encoding) body: \(error)", url: url, status: response?.status, underlying: error)
    }

    // MARK: The end

    private func finish(_ completion: TransferCompletion) -> FetchResult {
        var result = FetchResult(request: transfer.request, outcome: .ok)
        result.response = completion.response ?? response
        result.redirects = completion.redirects
        result.finalURL = result.response?.url
        result.newConnections = completion.newConnections
        transfer.channel.state.withLock {
            result.pauses = $0.pauses
            result.peakBufferedBytes = $0.peakBuffered
        }
        let status = result.response?.status
        if let error = outcome(completion, status: status) {
            result.outcome = .failed(error)
        } else if status == 304 {
            result.outcome = .notModified
        } else if let status, (200..<300).contains(status) {
            if response == nil, let final = completion.response { begin(final) }
            finishBody()
            if let failure {
                result.outcome = .failed(failure)
            } else {
                do {
                    result.bodySHA256 = try hasher?.digest()
                    result.outcome = .ok
                } catch {
                    result.outcome = .failed(hashError(error))
                }
            }
        } else if let status {
            result.outcome = .failed(httpError(status, result.response))
        } else {
            result.outcome = .failed(FetchError(kind: .network, message: "no response", url: url, curlCode: completion.curlCode))
        }
        result.bodyBytes = max(bodyBytes, completion.bodyBytes)
        result.decodedBytes = decodedBytes
        result.contentEncoding = contentEncoding
        result.duration = Self.seconds(ContinuousClock.now - transfer.started)
        return result
    }

    /// The failure that decides the outcome, if any: the consumer side's own first (a consumer's failure on inflated
    /// bytes once the compressed stream was read without damage), then the transfer thread's.
    private func outcome(_ completion: TransferCompletion, status: Int?) -> FetchError? {
        if var failure = failure ?? consumerFailureWhileInflating {
            failure.status = failure.status ?? status
            return failure
        }
        if transfer.channel.isCancelled {
            return FetchError(kind: .cancelled, message: "cancelled", url: url, status: status)
        }
        if transfer.wasAbandoned {
            return FetchError(kind: .cancelled, message: "abandoned: its buffer filled before it was reserved (start it again)",
                              url: url, status: status)
        }
        if var abort = completion.abort {
            abort.status = abort.status ?? status
            if abort.url.isEmpty { abort.url = url }
            return abort
        }
        let code = completion.curlCode
        guard code != .ok else { return nil }
        let kind: FetchError.Kind
        switch code {
        case .couldntResolveHost, .couldntResolveProxy: kind = .dnsFailure
        case .couldntConnect:
            // No route (the machine is offline, or the address family has none) is not the server refusing.
            // EHOSTUNREACH is left out: one host behind a rejecting firewall is that host's failure, not the network's.
            kind = [ENETUNREACH, ENETDOWN].contains(completion.systemError) ? .unreachable : .connectionRefused
        case .operationTimedOut: kind = .timeout
        case .tooManyRedirects: kind = .tooManyRedirects
        case .unsupportedProtocol: kind = .unsupportedScheme
        case .urlMalformat: kind = .invalidURL
        case .filesizeExceeded: kind = .tooLarge(.bodyBytes)
        case .badContentEncoding: kind = .badContentEncoding
        case .abortedByCallback: kind = .cancelled
        case .partialFile, .recvError, .http2, .http2Stream, .sendError:
            // Mid-body when a successful response had begun; otherwise the exchange itself failed.
            kind = status.map { (200..<300).contains($0) } == true ? .truncated : .network
        default: kind = code.isTLSError ? .tlsFailure : .network
        }
        return FetchError(kind: kind, message: completion.curlMessage, url: url, curlCode: code, status: status)
    }

    private func finishBody() {
        guard failure == nil else { return }
        if let held = sniffedByte {
            // A body of one byte: not gzip.
            sniffedByte = nil
            sniffsGzip = false
            withUnsafeBytes(of: held) { decode($0) }
            guard failure == nil else { return }
        }
        if let inflater {
            do { try inflater.finish() } catch {
                failInflating(error)
                return
            }
        }
        do {
            try consumer.fetchDidFinish()
        } catch {
            fail(consumerError(error))
        }
    }

    private func httpError(_ status: Int, _ response: FetchResponse?) -> FetchError {
        let kind: FetchError.Kind
        switch status {
        case 410: kind = .gone
        case 429: kind = .rateLimited(retryAfter: response?.retryAfter)
        case 503: kind = .serviceUnavailable(retryAfter: response?.retryAfter)
        default: kind = .httpStatus(status)
        }
        var message = "HTTP status \(status)"
        if let retry = response?.headers["Retry-After"] { message += ", Retry-After: \(retry)" }
        return FetchError(kind: kind, message: message, url: url, status: status)
    }

    static func seconds(_ duration: Duration) -> TimeInterval { duration.seconds }

    // MARK: Without the network

    /// Completes a transfer that needs no transfer thread: a local file, or a request refused before it started.
    func runWithoutNetwork() -> FetchResult {
        let request = transfer.request
        guard request.allowsLocalFile, request.url.isFileURL else {
            let error: FetchError
            if request.url.isFileURL || !["http", "https"].contains(request.scheme) {
                error = FetchError(kind: .unsupportedScheme,
                                   message: request.url.isFileURL
                                       ? "file URLs are read only when asked for explicitly (FetchRequest.localFile)"
                                       : "unsupported scheme '\(request.scheme)': only http and https are fetched",
                                   url: url)
            } else {
                error = FetchError(kind: .invalidURL, message: "not a URL that can be fetched", url: url)
            }
            return finish(TransferCompletion(abort: error))
        }
        let path = request.readsStandardInput ? nil : request.url.path
        let reader: LocalFileReader
        do { reader = try LocalFileReader(path: path) } catch {
            return finish(TransferCompletion(abort: FetchError(kind: .fileUnreadable, message: error.message, url: url)))
        }
        begin(FetchResponse(status: 200, headers: HTTPHeaders(), url: request.url))
        sniffsGzip = true
        var completion = TransferCompletion(response: response)
        while failure == nil {
            if transfer.channel.isCancelled { break }
            var tooLarge = false
            do {
                let more = try reader.read { chunk in
                    if bodyBytes + Int64(chunk.count) > configuration.maximumBodyBytes {
                        tooLarge = true
                    } else {
                        process(chunk)
                    }
                }
                if !more { break }
            } catch {
                completion.abort = FetchError(kind: .fileUnreadable, message: error.message, url: url)
                break
            }
            if tooLarge {
                let what = path == nil ? "standard input" : "the file"
                fail(FetchError(kind: .tooLarge(.bodyBytes), message: "\(what) exceeds the limit of \(configuration.maximumBodyBytes) bytes", url: url))
                break
            }
            if reader.mayWait { willWait() }
        }
        return finish(completion)
    }
}
