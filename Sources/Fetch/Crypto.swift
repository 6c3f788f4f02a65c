// The one file in Fetch that calls libcrypto (OpenSSL 3: openssl/evp.h, openssl/err.h). References are to
// https://www.openssl.org/docs/man3.0/man3/EVP_DigestInit.html and https://www.openssl.org/docs/man3.0/man3/ERR_get_error.html.
import CCrypto

/// An OpenSSL error code as `ERR_get_error` packs it: the library and the reason.
///
/// ``description`` is OpenSSL's own text for it (`ERR_error_string_n`), for example
/// `error:03000086:digital envelope routines::initialization error`.
public struct OpenSSLErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The packed code; 0 when libcrypto queued no error.
    public let rawValue: UInt

    /// Creates a code from its packed value.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// No error was queued: the call failed without saying why.
    public static let none = OpenSSLErrorCode(rawValue: 0)

    /// The library that raised the error (`ERR_GET_LIB`; 6 is `ERR_LIB_EVP`).
    public var library: Int32 { ERR_GET_LIB(rawValue) }
    /// The reason within that library (`ERR_GET_REASON`).
    public var reason: Int32 { ERR_GET_REASON(rawValue) }

    /// OpenSSL's text for the reason alone (`ERR_reason_error_string`), if it has one.
    public var reasonText: String? { ERR_reason_error_string(rawValue).map { String(cString: $0) } }

    /// OpenSSL's full text for the code (`ERR_error_string_n`).
    public var description: String {
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(rawValue, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension HashError {
    /// The error of a libcrypto call that failed: the most recent error it queued on this thread (the queue is
    /// thread-local; older entries there may belong to earlier calls, libcurl's TLS included), then clears the queue.
    static func libcrypto(_ function: String) -> HashError {
        let code = OpenSSLErrorCode(rawValue: ERR_peek_last_error())
        ERR_clear_error()
        let reason = code == .none ? "no reason given" : (code.reasonText ?? code.description)
        return HashError(kind: .libcrypto, libcryptoCode: code, message: "libcrypto \(function) failed: \(reason)", context: function)
    }
}

/// Checks one libcrypto result and throws libcrypto's error when it failed. Every libcrypto call in Fetch goes
/// through it: the EVP calls return 1 on success and 0 on failure, `EVP_MD_CTX_new` a pointer or `NULL`.
@inline(__always)
private func check(_ succeeded: Bool, _ function: String) throws(HashError) {
    guard succeeded else { throw HashError.libcrypto(function) }
}

/// One libcrypto message-digest context (`EVP_MD_CTX *`), initialised for SHA-256.
///
/// `@unchecked Sendable` because it is only ever changed through a ``SHA256`` value that holds the only reference
/// (copy-on-write, `isKnownUniquelyReferenced`); a context that several values share is only read, by
/// `EVP_MD_CTX_copy_ex`, whose source is `const` and which OpenSSL allows on several threads at once.
final class DigestContext: @unchecked Sendable {
    private let context: OpaquePointer

    /// A context ready to hash with `digest`: SHA-256 (`EVP_sha256()`) unless a test passes another, or `nil`.
    init(digest: OpaquePointer? = EVP_sha256()) throws(HashError) {
        let made = EVP_MD_CTX_new()
        try check(made != nil, "EVP_MD_CTX_new")
        context = made!
        // Fully initialised from here: if a call below throws, deinit runs and frees the context.
        try check(EVP_DigestInit_ex(context, digest, nil) == 1, "EVP_DigestInit_ex")
    }

    /// A copy of `other`, state included (`EVP_MD_CTX_copy_ex`).
    private init(copying other: DigestContext) throws(HashError) {
        let made = EVP_MD_CTX_new()
        try check(made != nil, "EVP_MD_CTX_new")
        context = made!
        try check(EVP_MD_CTX_copy_ex(context, other.context) == 1, "EVP_MD_CTX_copy_ex")  // deinit frees it on failure
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    /// An independent copy with the same state.
    func copy() throws(HashError) -> DigestContext {
        try DigestContext(copying: self)
    }

    /// Adds bytes (`EVP_DigestUpdate`).
    func update(_ bytes: UnsafeRawBufferPointer) throws(HashError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        try check(EVP_DigestUpdate(context, base, bytes.count) == 1, "EVP_DigestUpdate")
    }

    /// Ends the hash and returns the digest (`EVP_DigestFinal_ex`); the context must not be updated afterwards.
    func finish() throws(HashError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let result = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        try check(result == 1, "EVP_DigestFinal_ex")
        digest.removeSubrange(Int(length)...)
        return digest
    }
}
