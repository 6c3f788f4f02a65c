// The one file in Fetch that calls libcurl (curl/curl.h, curl/multi.h). Everything else in the module talks to
// these small wrappers. References are to libcurl's documentation at https://curl.se/libcurl/c/.
//
// Threading (https://curl.se/libcurl/c/threadsafe.html): an easy or multi handle must not be used from two threads
// at once. `CurlEasy` and `CurlMulti` are therefore not `Sendable` and are confined to the transfer thread; the one
// exception is `curl_multi_wakeup`, which libcurl documents as callable from any thread (`CurlWakeup`).
import CCurl
import Support

/// A libcurl result code, `CURLcode` (https://curl.se/libcurl/c/libcurl-errors.html).
///
/// The common codes have names; any other value keeps its number, and ``description`` gives libcurl's text for it.
public struct CurlCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The `CURLcode` number.
    public let rawValue: Int32

    /// Creates a code from its `CURLcode` number.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    init(_ code: CURLcode) { rawValue = Int32(bitPattern: code.rawValue) }

    /// `CURLE_OK`: no error.
    public static let ok = CurlCode(rawValue: 0)
    /// `CURLE_UNSUPPORTED_PROTOCOL`: a scheme that is not allowed (for example a redirect to `file:`).
    public static let unsupportedProtocol = CurlCode(rawValue: 1)
    /// `CURLE_URL_MALFORMAT`: the URL is not well-formed.
    public static let urlMalformat = CurlCode(rawValue: 3)
    /// `CURLE_COULDNT_RESOLVE_PROXY`: the proxy's name did not resolve.
    public static let couldntResolveProxy = CurlCode(rawValue: 5)
    /// `CURLE_COULDNT_RESOLVE_HOST`: the host name did not resolve.
    public static let couldntResolveHost = CurlCode(rawValue: 6)
    /// `CURLE_COULDNT_CONNECT`: the connection was refused or could not be made.
    public static let couldntConnect = CurlCode(rawValue: 7)
    /// `CURLE_WEIRD_SERVER_REPLY`: the server's reply was not HTTP.
    public static let weirdServerReply = CurlCode(rawValue: 8)
    /// `CURLE_HTTP2`: an error in the HTTP/2 framing layer.
    public static let http2 = CurlCode(rawValue: 16)
    /// `CURLE_PARTIAL_FILE`: the body ended before the announced length.
    public static let partialFile = CurlCode(rawValue: 18)
    /// `CURLE_WRITE_ERROR`: the write callback stopped the transfer (Fetch does this to enforce its limits).
    public static let writeError = CurlCode(rawValue: 23)
    /// `CURLE_OUT_OF_MEMORY`.
    public static let outOfMemory = CurlCode(rawValue: 27)
    /// `CURLE_OPERATION_TIMEDOUT`: a connect, total or low-speed timeout.
    public static let operationTimedOut = CurlCode(rawValue: 28)
    /// `CURLE_SSL_CONNECT_ERROR`: the TLS handshake failed.
    public static let sslConnectError = CurlCode(rawValue: 35)
    /// `CURLE_ABORTED_BY_CALLBACK`.
    public static let abortedByCallback = CurlCode(rawValue: 42)
    /// `CURLE_TOO_MANY_REDIRECTS`: more redirects than `CURLOPT_MAXREDIRS` allows.
    public static let tooManyRedirects = CurlCode(rawValue: 47)
    /// `CURLE_GOT_NOTHING`: the server closed the connection without replying.
    public static let gotNothing = CurlCode(rawValue: 52)
    /// `CURLE_SSL_ENGINE_NOTFOUND`.
    public static let sslEngineNotFound = CurlCode(rawValue: 53)
    /// `CURLE_SSL_ENGINE_SETFAILED`.
    public static let sslEngineSetFailed = CurlCode(rawValue: 54)
    /// `CURLE_SEND_ERROR`: sending on the connection failed.
    public static let sendError = CurlCode(rawValue: 55)
    /// `CURLE_RECV_ERROR`: receiving failed, for example a connection reset.
    public static let recvError = CurlCode(rawValue: 56)
    /// `CURLE_SSL_CERTPROBLEM`: a problem with the local client certificate.
    public static let sslCertProblem = CurlCode(rawValue: 58)
    /// `CURLE_SSL_CIPHER`: no usable cipher.
    public static let sslCipher = CurlCode(rawValue: 59)
    /// `CURLE_PEER_FAILED_VERIFICATION`: the server's certificate or fingerprint was not accepted.
    public static let peerFailedVerification = CurlCode(rawValue: 60)
    /// `CURLE_BAD_CONTENT_ENCODING`: libcurl could not decode the body.
    public static let badContentEncoding = CurlCode(rawValue: 61)
    /// `CURLE_FILESIZE_EXCEEDED`: the announced size is above `CURLOPT_MAXFILESIZE_LARGE`.
    public static let filesizeExceeded = CurlCode(rawValue: 63)
    /// `CURLE_SSL_ENGINE_INITFAILED`.
    public static let sslEngineInitFailed = CurlCode(rawValue: 66)
    /// `CURLE_SSL_CACERT_BADFILE`: the CA bundle could not be read.
    public static let sslCACertBadFile = CurlCode(rawValue: 77)
    /// `CURLE_SSL_SHUTDOWN_FAILED`.
    public static let sslShutdownFailed = CurlCode(rawValue: 80)
    /// `CURLE_SSL_CRL_BADFILE`.
    public static let sslCRLBadFile = CurlCode(rawValue: 82)
    /// `CURLE_SSL_ISSUER_ERROR`.
    public static let sslIssuerError = CurlCode(rawValue: 83)
    /// `CURLE_SSL_PINNEDPUBKEYNOTMATCH`.
    public static let sslPinnedPublicKeyNotMatch = CurlCode(rawValue: 90)
    /// `CURLE_SSL_INVALIDCERTSTATUS`.
    public static let sslInvalidCertStatus = CurlCode(rawValue: 91)
    /// `CURLE_HTTP2_STREAM`: an HTTP/2 stream was reset.
    public static let http2Stream = CurlCode(rawValue: 92)
    /// `CURLE_SSL_CLIENTCERT`: the server wanted a client certificate.
    public static let sslClientCertificate = CurlCode(rawValue: 98)

    /// Whether the code is one of libcurl's TLS errors.
    public var isTLSError: Bool {
        [Self.sslConnectError, .sslEngineNotFound, .sslEngineSetFailed, .sslCertProblem, .sslCipher, .peerFailedVerification,
         .sslEngineInitFailed, .sslCACertBadFile, .sslShutdownFailed, .sslCRLBadFile, .sslIssuerError,
         .sslPinnedPublicKeyNotMatch, .sslInvalidCertStatus, .sslClientCertificate].contains(self)
    }

    /// libcurl's text for the code (`curl_easy_strerror`) and its number.
    public var description: String {
        let text = curl_easy_strerror(CURLcode(rawValue: UInt32(bitPattern: rawValue))).map { String(cString: $0) } ?? "unknown"
        return "\(text) (CURLcode \(rawValue))"
    }
}

/// A libcurl multi-interface result code, `CURLMcode` (https://curl.se/libcurl/c/libcurl-errors.html).
///
/// The codes have names; ``description`` gives libcurl's text (`curl_multi_strerror`) and the number.
public struct CurlMultiCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The `CURLMcode` number.
    public let rawValue: Int32

    /// Creates a code from its `CURLMcode` number.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    init(_ code: CURLMcode) { rawValue = code.rawValue }

    /// `CURLM_OK`: no error.
    public static let ok = CurlMultiCode(rawValue: 0)
    /// `CURLM_BAD_HANDLE`: not a valid multi handle.
    public static let badHandle = CurlMultiCode(rawValue: 1)
    /// `CURLM_BAD_EASY_HANDLE`: not a valid easy handle, or one that belongs to another multi handle.
    public static let badEasyHandle = CurlMultiCode(rawValue: 2)
    /// `CURLM_OUT_OF_MEMORY`.
    public static let outOfMemory = CurlMultiCode(rawValue: 3)
    /// `CURLM_INTERNAL_ERROR`: a bug in libcurl.
    public static let internalError = CurlMultiCode(rawValue: 4)
    /// `CURLM_BAD_SOCKET`.
    public static let badSocket = CurlMultiCode(rawValue: 5)
    /// `CURLM_UNKNOWN_OPTION`: `curl_multi_setopt` with an option this libcurl does not know.
    public static let unknownOption = CurlMultiCode(rawValue: 6)
    /// `CURLM_ADDED_ALREADY`: the easy handle is in a multi handle already.
    public static let addedAlready = CurlMultiCode(rawValue: 7)
    /// `CURLM_RECURSIVE_API_CALL`: called from inside one of libcurl's callbacks.
    public static let recursiveAPICall = CurlMultiCode(rawValue: 8)
    /// `CURLM_WAKEUP_FAILURE`: `curl_multi_wakeup` could not signal the waiting thread.
    public static let wakeupFailure = CurlMultiCode(rawValue: 9)
    /// `CURLM_BAD_FUNCTION_ARGUMENT`.
    public static let badFunctionArgument = CurlMultiCode(rawValue: 10)
    /// `CURLM_ABORTED_BY_CALLBACK`.
    public static let abortedByCallback = CurlMultiCode(rawValue: 11)
    /// `CURLM_UNRECOVERABLE_POLL`: waiting on the sockets failed (`poll(2)` itself).
    public static let unrecoverablePoll = CurlMultiCode(rawValue: 12)

    /// libcurl's text for the code (`curl_multi_strerror`) and its number.
    public var description: String {
        let text = curl_multi_strerror(CURLMcode(rawValue: rawValue)).map { String(cString: $0) } ?? "unknown"
        return "\(text) (CURLMcode \(rawValue))"
    }
}

/// A libcurl multi-interface call that failed: which call, and libcurl's code.
public struct CurlMultiError: Error, Sendable, Hashable, CustomStringConvertible {
    /// libcurl's code.
    public var code: CurlMultiCode
    /// The call that failed, for example `curl_multi_perform`.
    public var function: String

    /// Creates an error value.
    public init(code: CurlMultiCode, function: String) {
        self.code = code
        self.function = function
    }

    /// `function failed: text (CURLMcode n)`.
    public var description: String { "\(function) failed: \(code)" }
}

/// Checks one multi-interface result; every `curl_multi_*` call that returns a `CURLMcode` goes through it.
@inline(__always)
private func check(_ code: CURLMcode, _ function: String) throws(CurlMultiError) {
    guard code == CURLM_OK else { throw CurlMultiError(code: CurlMultiCode(code), function: function) }
}

/// A libcurl easy-interface call that failed: an option libcurl refused, a handle it could not create, or a paused
/// transfer it could not resume.
struct CurlEasyError: Error {
    let code: CurlCode
    let what: String
}

/// libcurl's process-wide state.
enum CurlGlobal {
    /// `curl_global_init`, called exactly once, the first time a fetcher needs libcurl: a `static let` is initialised
    /// once, atomically (https://curl.se/libcurl/c/curl_global_init.html). Never cleaned up: the process may use
    /// libcurl until it exits.
    static let initialization: CurlCode = CurlCode(curl_global_init(Int(CURL_GLOBAL_ALL)))

    /// libcurl's version string (`curl_version`), for messages.
    static let version: String = String(cString: curl_version())
}

/// What the write callback tells libcurl to do with the bytes it offered.
enum CurlWriteDecision {
    /// The bytes were taken.
    case accept
    /// Not now: libcurl keeps the bytes and offers them again after `curl_easy_pause(CURLPAUSE_CONT)`.
    case pause
    /// Stop the transfer; it ends with `CURLE_WRITE_ERROR`.
    case abort
}

/// Receives one easy handle's header lines and body bytes, on the transfer thread.
protocol CurlEasyDelegate: AnyObject {
    /// One header line, with its CRLF, of any response (redirects included), valid only during the call.
    func curlHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool
    /// Body bytes of the final response, exactly as they came off the wire (no content decoding).
    func curlBody(_ bytes: UnsafeRawBufferPointer) -> CurlWriteDecision
}

/// One libcurl easy handle (`CURL *`): one transfer's options, callbacks and results.
///
/// Confined to the transfer thread, so deliberately not `Sendable`.
final class CurlEasy {
    let handle: UnsafeMutableRawPointer
    /// Receives the callbacks; the transfer thread keeps the delegate alive while the handle is in the multi handle.
    unowned(unsafe) var delegate: (any CurlEasyDelegate)?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// `CURLOPT_ERRORBUFFER`: libcurl writes a specific message here; it must live as long as the handle.
    private let errorBuffer: UnsafeMutablePointer<CChar>

    init() throws(CurlEasyError) {
        guard CurlGlobal.initialization == .ok else {
            throw CurlEasyError(code: CurlGlobal.initialization, what: "curl_global_init")
        }
        guard let handle = curl_easy_init() else { throw CurlEasyError(code: .outOfMemory, what: "curl_easy_init") }
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        try check(CCurl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
        // The callbacks find this object through their user data; it is not retained (the owner keeps it alive).
        let me = Unmanaged.passUnretained(self).toOpaque()
        try check(CCurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, me), "CURLOPT_WRITEDATA")
        try check(CCurl_easy_setopt_write_callback(handle, CURLOPT_WRITEFUNCTION, curlWriteCallback), "CURLOPT_WRITEFUNCTION")
        try check(CCurl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, me), "CURLOPT_HEADERDATA")
        try check(CCurl_easy_setopt_write_callback(handle, CURLOPT_HEADERFUNCTION, curlHeaderCallback), "CURLOPT_HEADERFUNCTION")
    }

    deinit {
        curl_easy_cleanup(handle)
        if let headerList { curl_slist_free_all(headerList) }
        errorBuffer.deallocate()
    }

    private func check(_ code: CURLcode, _ option: String) throws(CurlEasyError) {
        guard code == CURLE_OK else { throw CurlEasyError(code: CurlCode(code), what: option) }
    }

    /// Sets an option that takes a `long` (https://curl.se/libcurl/c/curl_easy_setopt.html).
    func set(_ option: CURLoption, _ value: Int, _ name: String) throws(CurlEasyError) {
        try check(CCurl_easy_setopt_long(handle, option, value), name)
    }

    /// Sets an option that takes a `curl_off_t`.
    func set(_ option: CURLoption, offset value: Int64, _ name: String) throws(CurlEasyError) {
        try check(CCurl_easy_setopt_off_t(handle, option, curl_off_t(value)), name)
    }

    /// Sets an option that takes a string; libcurl copies it.
    func set(_ option: CURLoption, _ value: String, _ name: String) throws(CurlEasyError) {
        try check(CCurl_easy_setopt_string(handle, option, value), name)
    }

    /// Sets `CURLOPT_HTTPHEADER`; the list lives as long as the handle.
    func setHeaders(_ lines: [String]) throws(CurlEasyError) {
        var list: UnsafeMutablePointer<curl_slist>? = nil
        for line in lines {
            guard let longer = curl_slist_append(list, line) else {
                if let list { curl_slist_free_all(list) }
                throw CurlEasyError(code: .outOfMemory, what: "curl_slist_append")
            }
            list = longer
        }
        try check(CCurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list), "CURLOPT_HTTPHEADER")
        if let headerList { curl_slist_free_all(headerList) }
        headerList = list
    }

    /// Resumes a transfer that the write callback paused (`curl_easy_pause(CURLPAUSE_CONT)`). libcurl may call the
    /// write callback again from inside this call with the bytes it held back, and fails when that delivery does.
    func resume() throws(CurlEasyError) {
        try check(curl_easy_pause(handle, CURLPAUSE_CONT), "curl_easy_pause")
    }

    /// The specific message libcurl left in the error buffer, or its generic text for `code`.
    func message(for code: CurlCode) -> String {
        let specific = String(cString: errorBuffer)
        return specific.isEmpty ? code.description : specific
    }

    // MARK: curl_easy_getinfo (https://curl.se/libcurl/c/curl_easy_getinfo.html)

    private func long(_ info: CURLINFO) -> Int {
        var value = 0
        return CCurl_easy_getinfo_long(handle, info, &value) == CURLE_OK ? value : 0
    }

    private func offset(_ info: CURLINFO) -> Int64 {
        var value: curl_off_t = 0
        return CCurl_easy_getinfo_off_t(handle, info, &value) == CURLE_OK ? Int64(value) : 0
    }

    /// `CURLINFO_RESPONSE_CODE`: the last response's status, 0 before one arrived.
    var responseCode: Int { long(CURLINFO_RESPONSE_CODE) }
    /// `CURLINFO_NUM_CONNECTS`: how many new connections the transfer opened (0 when it reused one).
    var newConnections: Int { long(CURLINFO_NUM_CONNECTS) }
    /// `CURLINFO_REDIRECT_COUNT`: redirects followed.
    var redirectCount: Int { long(CURLINFO_REDIRECT_COUNT) }
    /// `CURLINFO_HTTP_VERSION`: `CURL_HTTP_VERSION_1_0`, `_1_1`, `_2_0` or `_3`, 0 when unknown.
    var httpVersion: Int { long(CURLINFO_HTTP_VERSION) }
    /// `CURLINFO_OS_ERRNO`: the `errno` of the last failed connect or socket call, 0 when none.
    var systemError: Int32 { Int32(truncatingIfNeeded: long(CURLINFO_OS_ERRNO)) }
    /// `CURLINFO_TOTAL_TIME_T`, in microseconds.
    var totalTimeMicroseconds: Int64 { offset(CURLINFO_TOTAL_TIME_T) }
    /// `CURLINFO_EFFECTIVE_URL`: the last URL used.
    var effectiveURL: String? {
        var value: UnsafeMutablePointer<CChar>? = nil
        guard CCurl_easy_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }
}

// The C callbacks. The user data is the `CurlEasy`, never retained; nothing throws across C.
// https://curl.se/libcurl/c/CURLOPT_WRITEFUNCTION.html and https://curl.se/libcurl/c/CURLOPT_HEADERFUNCTION.html
private func curlWriteCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    let length = size * count
    guard let user else { return 0 }
    let easy = Unmanaged<CurlEasy>.fromOpaque(user).takeUnretainedValue()
    guard let delegate = easy.delegate else { return 0 }
    switch delegate.curlBody(UnsafeRawBufferPointer(start: data, count: length)) {
    case .accept: return length
    case .pause: return CCurl_writefunc_pause()
    case .abort: return 0
    }
}

private func curlHeaderCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    let length = size * count
    guard let user else { return 0 }
    let easy = Unmanaged<CurlEasy>.fromOpaque(user).takeUnretainedValue()
    guard let delegate = easy.delegate else { return 0 }
    return delegate.curlHeaderLine(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

/// The libcurl multi handle (`CURLM *`) that drives every transfer of a ``Fetcher``.
///
/// Confined to the transfer thread, except for ``CurlWakeup/wakeup()``. libcurl's global state must be set up first
/// (``CurlGlobal/initialization``).
final class CurlMulti {
    let handle: UnsafeMutableRawPointer
    private var isClosed = false

    init() throws(CurlMultiError) {
        guard let handle = curl_multi_init() else { throw CurlMultiError(code: .outOfMemory, function: "curl_multi_init") }
        self.handle = handle
    }

    deinit {
        // Only when ``close()`` was not called: a deinitializer has no one to report a failure to, so a failure (only
        // possible for a handle libcurl does not know, CURLM_BAD_HANDLE, or from inside a callback) stops debug builds.
        if !isClosed {
            let code = curl_multi_cleanup(handle)
            assert(code == CURLM_OK, "curl_multi_cleanup failed in deinit: \(CurlMultiCode(rawValue: Int32(code.rawValue)))")
        }
    }

    /// `curl_multi_cleanup`: frees the handle, closing every cached connection. The handle must not be used again.
    func close() throws(CurlMultiError) {
        guard !isClosed else { return }
        isClosed = true
        try check(curl_multi_cleanup(handle), "curl_multi_cleanup")
    }

    /// Sets a multi option that takes a `long` (https://curl.se/libcurl/c/curl_multi_setopt.html).
    func set(_ option: CURLMoption, _ value: Int, _ name: String) throws(CurlMultiError) {
        try check(CCurl_multi_setopt_long(handle, option, value), "curl_multi_setopt(\(name))")
    }

    /// `curl_multi_add_handle`: the transfer starts on the next ``perform()``.
    func add(_ easy: CurlEasy) throws(CurlMultiError) {
        try check(curl_multi_add_handle(handle, easy.handle), "curl_multi_add_handle")
    }

    /// `curl_multi_remove_handle`: stops the transfer wherever it is; its connection may be closed.
    func remove(_ easy: CurlEasy) throws(CurlMultiError) {
        try check(curl_multi_remove_handle(handle, easy.handle), "curl_multi_remove_handle")
    }

    /// `curl_multi_perform`: moves every transfer forward as far as it can without blocking; returns how many run.
    @discardableResult
    func perform() throws(CurlMultiError) -> Int {
        var running: Int32 = 0
        try check(curl_multi_perform(handle, &running), "curl_multi_perform")
        return Int(running)
    }

    /// `curl_multi_poll`: waits for activity on any transfer's socket, a libcurl timeout, a wakeup or `timeout`.
    func poll(timeoutMilliseconds: Int32) throws(CurlMultiError) {
        try check(curl_multi_poll(handle, nil, 0, timeoutMilliseconds, nil), "curl_multi_poll")
    }

    /// `curl_multi_info_read`: the next finished transfer, as its easy handle and result, or `nil`.
    func nextFinished() -> (handle: UnsafeMutableRawPointer, result: CurlCode)? {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(handle, &remaining) {
            if message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle {
                return (easy, CurlCode(message.pointee.data.result))
            }
        }
        return nil
    }
}

/// The thread-safe door into a ``CurlMulti``: `curl_multi_wakeup` only.
///
/// `@unchecked Sendable` because libcurl documents `curl_multi_wakeup` as safe to call from any thread
/// (https://curl.se/libcurl/c/curl_multi_wakeup.html), and the handle's lifetime is guarded: ``close()`` runs under
/// the same lock before the multi handle is cleaned up, so no wakeup can reach a freed handle.
final class CurlWakeup: @unchecked Sendable {
    /// The multi handle's address as an integer (a raw pointer is not `Sendable`), 0 when closed.
    private let handle = Lock<UInt>(0)

    init() {}

    /// Lets wakeups reach `multi`; called by the transfer thread once it has created the multi handle.
    func open(_ multi: CurlMulti) {
        let address = UInt(bitPattern: multi.handle)
        handle.withLock { $0 = address }
    }

    /// Interrupts the transfer thread's ``CurlMulti/poll(timeoutMilliseconds:)``, from any thread; does nothing once
    /// closed.
    func wakeup() throws(CurlMultiError) {
        try handle.withLock { (address) throws(CurlMultiError) in
            if let multi = UnsafeMutableRawPointer(bitPattern: address) { try check(curl_multi_wakeup(multi), "curl_multi_wakeup") }
        }
    }

    /// Makes every later ``wakeup()`` a no-op; called by the transfer thread before it frees the multi handle.
    func close() {
        handle.withLock { $0 = 0 }
    }
}

/// A code from libcurl's URL API (`CURLUcode`, curl/urlapi.h), with libcurl's own words for it.
public struct CurlURLCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The `CURLUcode` number.
    public let rawValue: Int32
    /// Wraps a code.
    public init(rawValue: Int32) { self.rawValue = rawValue }
    init(_ code: CURLUcode) { rawValue = Int32(bitPattern: code.rawValue) }

    /// `CURLUE_OK`.
    public static let ok = CurlURLCode(rawValue: 0)
    /// `CURLUE_MALFORMED_INPUT`.
    public static let malformedInput = CurlURLCode(rawValue: 3)
    /// `CURLUE_BAD_PORT_NUMBER`.
    public static let badPortNumber = CurlURLCode(rawValue: 4)
    /// `CURLUE_UNSUPPORTED_SCHEME`.
    public static let unsupportedScheme = CurlURLCode(rawValue: 5)
    /// `CURLUE_NO_HOST`.
    public static let noHost = CurlURLCode(rawValue: 14)
    /// `CURLUE_BAD_HOSTNAME`.
    public static let badHostname = CurlURLCode(rawValue: 21)
    /// `CURLUE_BAD_IPV6`.
    public static let badIPv6 = CurlURLCode(rawValue: 22)

    /// libcurl's message (`curl_url_strerror`), e.g. `Bad IPv6 address`.
    public var description: String {
        curl_url_strerror(CURLUcode(rawValue: UInt32(bitPattern: rawValue))).map { String(cString: $0) } ?? "URL error \(rawValue)"
    }
}

/// libcurl's URL parser (`curl_url`, `curl_url_set`): the parser that will fetch a URL, asked whether it accepts it.
enum CurlURL {
    /// Parses `text` as an absolute URL the way a transfer would (`curl_url_set(CURLUPART_URL)`, no guessing of a
    /// scheme, spaces refused) and returns libcurl's code: ``CurlURLCode/ok`` when it accepts the URL.
    /// https://curl.se/libcurl/c/curl_url_set.html
    static func check(_ text: String) -> CurlURLCode {
        guard let handle = curl_url() else { return CurlURLCode(CURLUE_OUT_OF_MEMORY) }
        defer { curl_url_cleanup(handle) }
        let code = CurlURLCode(curl_url_set(handle, CURLUPART_URL, text, 0))
        guard code == .ok else { return code }
        // A URL may parse without a host (`http:/feed`, which curl reads leniently); a transfer needs one.
        var host: UnsafeMutablePointer<CChar>?
        let hostCode = CurlURLCode(curl_url_get(handle, CURLUPART_HOST, &host, 0))
        defer { curl_free(host) }
        if hostCode != .ok { return hostCode }
        if host.map({ $0.pointee == 0 }) ?? true { return .noHost }
        return .ok
    }

    /// What libcurl's parser finds in a URL's user information.
    enum Password: Equatable {
        /// libcurl refused the string as a URL.
        case unparsed
        /// A URL without a password (with or without a user).
        case none
        /// The password as written (still percent-encoded).
        case password(String)
    }

    /// The password of `text`'s user information, as libcurl reads it (`CURLUPART_PASSWORD`, not decoded); any
    /// scheme is accepted (`CURLU_NON_SUPPORT_SCHEME`), since a URL is redacted whether or not it could be fetched.
    /// https://curl.se/libcurl/c/curl_url_get.html
    static func password(of text: String) -> Password {
        guard let handle = curl_url() else { return .unparsed }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, text, UInt32(CURLU_NON_SUPPORT_SCHEME)) == CURLUE_OK else { return .unparsed }
        var password: UnsafeMutablePointer<CChar>?
        let code = curl_url_get(handle, CURLUPART_PASSWORD, &password, 0)
        defer { curl_free(password) }
        guard code == CURLUE_OK, let password else { return .none }
        return .password(String(cString: password))
    }

    /// `text` rebuilt by libcurl with its password replaced by `mask` (`curl_url_set(CURLUPART_PASSWORD)`), or `nil`
    /// when libcurl refuses it; the result is libcurl's normalised spelling of the URL.
    static func replacingPassword(of text: String, with mask: String) -> String? {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        let flags = UInt32(CURLU_NON_SUPPORT_SCHEME)
        guard curl_url_set(handle, CURLUPART_URL, text, flags) == CURLUE_OK,
              curl_url_set(handle, CURLUPART_PASSWORD, mask, 0) == CURLUE_OK else { return nil }
        var url: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, CURLUPART_URL, &url, flags) == CURLUE_OK, let url else { return nil }
        defer { curl_free(url) }
        return String(cString: url)
    }
}
