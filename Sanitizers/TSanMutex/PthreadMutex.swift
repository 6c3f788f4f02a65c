// ThreadSanitizer builds only (`make test-tsan`, FEEDINGEST_TSAN=1 in Package.swift): a lock of
// Synchronization.Mutex's shape over a pthread mutex. On Linux, Mutex locks with a raw futex that TSan does not
// see, so TSan reports a race on every value a Mutex protects; a pthread mutex is intercepted by TSan, so with this
// lock in its place only real races are reported. Each module that uses Mutex has a `TSanMutex.swift` that, in such a
// build only, shadows `Mutex` with this type.

#if canImport(Glibc)
import Glibc
#endif

/// A mutual-exclusion lock around a value, like `Synchronization.Mutex`, over a `pthread_mutex_t`.
///
/// `@unchecked Sendable` because every access to the value goes through ``withLock(_:)``, under the pthread mutex.
public struct PthreadMutex<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

    /// Creates a lock around `initialValue`.
    public init(_ initialValue: consuming sending Value) {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(lock, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with the value while holding the lock.
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return try body(&value.pointee)
    }
}
