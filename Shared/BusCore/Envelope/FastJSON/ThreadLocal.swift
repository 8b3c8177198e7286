#if canImport(Glibc)
    import Glibc
#endif

/// One object per thread, made on first use on that thread and released when the thread ends.
/// For scratch state that code on the hot path would otherwise allocate per call (the payload
/// encoder's buffers); the object must not escape the synchronous call that borrows it.
final class ThreadLocal<Value: AnyObject>: Sendable {
    private let key: pthread_key_t
    private let make: @Sendable () -> Value

    init(_ make: @escaping @Sendable () -> Value) {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            Unmanaged<AnyObject>.fromOpaque(pointer).release()
        }
        precondition(status == 0, "pthread_key_create failed with \(status)")
        self.key = key
        self.make = make
    }

    /// This thread's object.
    var value: Value {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Value>.fromOpaque(pointer).takeUnretainedValue()
        }
        let made = make()
        pthread_setspecific(key, Unmanaged.passRetained(made as AnyObject).toOpaque())
        return made
    }
}
