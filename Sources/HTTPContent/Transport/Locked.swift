#if canImport(Glibc)
import Glibc
#endif

/// A value guarded by a `pthread_mutex_t`: the library's one lock.
///
/// Used instead of `Synchronization.Mutex`, whose contended path runs inside
/// libswiftSynchronization.so (not instrumented), so ThreadSanitizer cannot see the
/// happens-before it creates and reports false data races on every contended `Mutex` (seen with
/// Swift 6.3.1 on Linux, on a 20-line program that is race-free). ThreadSanitizer intercepts
/// pthread mutexes, so with this lock `scripts/sanitize.sh tsan` reports only real races.
/// Uncontended, both are one atomic operation.
package final class Locked<Value>: @unchecked Sendable {
    // Visible to inlined code: `withLock` is inlinable, so callers in other modules (the C
    // ABI) get it specialised instead of calling the generic entry point.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // Only touched under the mutex: no dynamic exclusivity check needed.
    @usableFromInline @exclusivity(unchecked) var value: Value

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "httpcontent: pthread_mutex_init failed (\(rc))")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    package func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
