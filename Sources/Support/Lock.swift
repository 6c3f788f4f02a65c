// The one lock type of every module: Synchronization's Mutex, or in ThreadSanitizer builds (FEEDINGEST_TSAN) a
// pthread-mutex lock of the same shape that TSan can see (Sanitizers/TSanMutex says why).
#if FEEDINGEST_TSAN
import TSanMutex

/// A mutual-exclusion lock around a value: `Synchronization.Mutex`, or in ThreadSanitizer builds a pthread mutex TSan
/// understands.
public typealias Lock<Value: ~Copyable> = PthreadMutex<Value>
#else
import Synchronization

/// A mutual-exclusion lock around a value: `Synchronization.Mutex`, or in ThreadSanitizer builds a pthread mutex TSan
/// understands.
public typealias Lock<Value: ~Copyable> = Synchronization.Mutex<Value>
#endif
