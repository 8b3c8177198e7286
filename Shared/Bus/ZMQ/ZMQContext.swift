import CZeroMQ

/// A libzmq context. Sockets hold a strong reference to the context that made them, so the
/// context is terminated (`zmq_ctx_term`, which waits for every open socket) only after its last
/// socket has closed: shutdown can never hang on a socket somebody forgot.
///
/// A context and all of its sockets are confined to one ``SocketLoop`` thread, which is why this
/// type is not `Sendable`.
final class ZMQContext {
    let handle: UnsafeMutableRawPointer
    private var terminated = false

    init(ioThreads: Int32 = 1) throws(ZMQError) {
        handle = try zmqCall("zmq_ctx_new") { zmq_ctx_new() }
        try zmqCall("zmq_ctx_set(ZMQ_IO_THREADS)") { zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads) }
        // Sockets set their own LINGER; this bounds any socket that somehow does not.
        try zmqCall("zmq_ctx_set(ZMQ_BLOCKY)") { zmq_ctx_set(handle, ZMQ_BLOCKY, 0) }
    }

    /// Terminates the context now: waits until every socket's lingering messages have left (or
    /// their linger ran out). Call only after closing all of its sockets.
    func terminate() {
        guard !terminated else { return }
        terminated = true
        // zmqCall retries EINTR; the only other failure (EFAULT: not a context) cannot happen to
        // a handle this type made and terminates once.
        _ = try? zmqCall("zmq_ctx_term") { zmq_ctx_term(handle) }
    }

    deinit { terminate() }
}
