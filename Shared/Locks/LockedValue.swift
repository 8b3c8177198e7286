#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`: the lock every module of this package uses instead of
/// `Synchronization.Mutex`.
///
/// Why not `Mutex`: on Linux it locks with raw futex system calls that ThreadSanitizer does not
/// intercept, so every correctly locked access under it is reported as a "Swift access race" and a
/// TSan run cannot tell real races from noise. `pthread_mutex_lock`/`unlock` are intercepted, so
/// under this lock TSan sees the happens-before edges and reports only real races. Uncontended,
/// both cost one atomic compare-and-swap to lock and one to unlock.
///
/// The API is `Mutex`'s (`init(_:)`, `withLock(_:)` with `inout sending` access), so the two are
/// interchangeable at call sites. Unlike `Mutex` it is a class, so a local one can be captured by
/// escaping closures and task-group children. The `pthread_mutex_t` lives in its own heap
/// allocation because a pthread mutex must not move once initialised (as swift-nio's `NIOLock`).
public final class LockedValue<Value: ~Copyable>: @unchecked Sendable {
    // @unchecked Sendable: `value` is read and written only inside `withLock`, with `mutex` held,
    // and `withLock` takes and returns `sending` values, exactly the contract that makes
    // `Synchronization.Mutex` Sendable for any `Value`.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    /// A lock guarding `initialValue`.
    @inlinable
    public init(_ initialValue: consuming sending Value) {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
        value = initialValue
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value and returns what it returns. Not reentrant:
    /// calling `withLock` on the same lock inside `body` deadlocks, as with `Mutex`.
    @inlinable
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
