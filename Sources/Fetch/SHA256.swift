import Foundation
import Support

/// A SHA-256 digest: 32 bytes.
public struct SHA256Digest: Sendable, Hashable, CustomStringConvertible {
    /// The 32 bytes of the digest.
    public let bytes: [UInt8]

    /// Creates a digest from its 32 bytes.
    public init(bytes: [UInt8]) {
        precondition(bytes.count == 32, "a SHA-256 digest has 32 bytes")
        self.bytes = bytes
    }

    /// The digest in lowercase hexadecimal, 64 characters.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// ``hex``.
    public var description: String { hex }
}

/// Why a hash could not be computed: libcrypto failed, or a file to hash could not be read.
public struct HashError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed.
    public enum Kind: Sendable, Hashable {
        /// A libcrypto call failed (out of memory, or an OpenSSL configuration that offers no SHA-256, such as one
        /// that loads only the `null` provider); ``HashError/libcryptoCode`` says why.
        case libcrypto
        /// The file could not be opened or read; ``HashError/systemError`` is the `errno`.
        case fileUnreadable
    }

    /// What failed.
    public var kind: Kind
    /// libcrypto's error code, for ``Kind/libcrypto``; ``OpenSSLErrorCode/none`` otherwise.
    public var libcryptoCode: OpenSSLErrorCode
    /// The `errno` of a failed `open` or `read`, for ``Kind/fileUnreadable``; 0 otherwise.
    public var systemError: Int32
    /// A specific message.
    public var message: String
    /// The libcrypto function that failed (`EVP_DigestInit_ex`, …), or the path of the file.
    public var context: String

    /// Creates an error value.
    public init(kind: Kind, libcryptoCode: OpenSSLErrorCode = .none, systemError: Int32 = 0, message: String, context: String) {
        self.kind = kind
        self.libcryptoCode = libcryptoCode
        self.systemError = systemError
        self.message = message
        self.context = context
    }

    /// The message, with libcrypto's code when there is one.
    public var description: String {
        libcryptoCode == .none ? message : "\(message) (\(libcryptoCode))"
    }
}

/// A streaming SHA-256 (FIPS 180-4), computed by OpenSSL's libcrypto, so a body can be hashed while it downloads
/// and a file however large in chunks.
///
/// Fetch uses it to fingerprint a body, so a caller can tell an unchanged feed even when the server sends no
/// validators. A value type: a copy hashes on independently (copy-on-write over one libcrypto context).
///
/// libcrypto can fail (out of memory, or an OpenSSL configuration that offers no SHA-256). The first failure is
/// kept in ``error``; later updates are then ignored, ``digest()`` throws it, and ``finalize()`` stops the program
/// with it. Code that must carry on after such a failure calls ``digest()``.
public struct SHA256: Sendable {
    /// `nil` once libcrypto failed.
    private var context: DigestContext?
    /// The first libcrypto failure, if any: updates after it are ignored, and ``digest()`` throws it.
    public private(set) var error: HashError?

    /// A new, empty hash.
    public init() {
        self.init(context: { () throws(HashError) in try DigestContext() })
    }

    /// A hash over the context `make` returns; tests pass one that fails.
    init(context make: () throws(HashError) -> DigestContext) {
        do { context = try make() } catch { self.error = error }
    }

    /// Adds bytes to the hashed message.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, error == nil else { return }
        do {
            if !isKnownUniquelyReferenced(&context) { context = try context?.copy() }
            try context?.update(bytes)
        } catch {
            self.error = error
            context = nil
        }
    }

    /// Adds bytes to the hashed message, from `[UInt8]`, `Data` or any contiguous storage.
    public mutating func update(_ bytes: some ContiguousBytes) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Adds the bytes of a file, read in chunks of `chunkSize` bytes, so memory stays at one chunk however large the
    /// file is (a download's partial file, before its new bytes are added).
    ///
    /// - Returns: The number of bytes read.
    /// - Throws: ``HashError`` when the file cannot be opened or read (``HashError/Kind/fileUnreadable``; the bytes
    ///   read before a failed read are hashed), or when libcrypto failed, now or before.
    @discardableResult
    public mutating func update(contentsOfFile path: String, chunkSize: Int = 1 << 20) throws(HashError) -> Int64 {
        if let error { throw error }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Self.fileError(path, "cannot be opened") }
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, chunkSize), alignment: 16)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        while true {
            let count = Errno.retryingInterrupts { read(descriptor, buffer.baseAddress, buffer.count) }
            if count < 0 { throw Self.fileError(path, "cannot be read") }
            if count == 0 { break }
            update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            if let error { throw error }
            total += Int64(count)
        }
        return total
    }

    private static func fileError(_ path: String, _ what: String) -> HashError {
        let code = errno
        return HashError(kind: .fileUnreadable, systemError: code,
                         message: "\(path) \(what): \(String(cString: strerror(code)))", context: path)
    }

    /// The digest of everything added. The hash itself is left unchanged, so more can be added afterwards.
    ///
    /// - Throws: ``HashError`` when libcrypto failed, now or in an earlier call.
    public func digest() throws(HashError) -> SHA256Digest {
        if let error { throw error }
        guard let context else { preconditionFailure("a SHA256 without a context has an error") }
        // EVP_DigestFinal_ex ends a context: finish a copy, so this one can go on.
        return SHA256Digest(bytes: try context.copy().finish())
    }

    /// The digest of everything added. The hash itself is left unchanged, so more can be added afterwards.
    ///
    /// Stops the program if libcrypto failed (see ``error``); use ``digest()`` where that must be handled.
    public func finalize() -> SHA256Digest {
        do {
            return try digest()
        } catch {
            fatalError("SHA-256: \(error)")
        }
    }

    /// The digest of `bytes`, in one call. Stops the program if libcrypto fails, like ``finalize()``.
    public static func hash(_ bytes: some ContiguousBytes) -> SHA256Digest {
        var hash = SHA256()
        hash.update(bytes)
        return hash.finalize()
    }

    /// The digest of a file's bytes, read in chunks of `chunkSize` bytes (see ``update(contentsOfFile:chunkSize:)``).
    ///
    /// - Throws: ``HashError`` when the file cannot be opened or read, or libcrypto fails.
    public static func hash(contentsOfFile path: String, chunkSize: Int = 1 << 20) throws(HashError) -> SHA256Digest {
        var hash = SHA256()
        try hash.update(contentsOfFile: path, chunkSize: chunkSize)
        return try hash.digest()
    }
}
