// ThreadSanitizer builds only (FEEDINGEST_TSAN): `Mutex` here is a pthread-mutex lock TSan understands (see
// Sanitizers/TSanMutex); every other build uses Synchronization's.
#if FEEDINGEST_TSAN
import TSanMutex
typealias Mutex<Value: ~Copyable> = PthreadMutex<Value>
#endif
