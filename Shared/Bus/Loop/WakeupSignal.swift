import CZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// A Linux eventfd that wakes a ``SocketLoop`` out of `zmq_poll` when another thread hands it
/// work. Writes coalesce: many `signal()` calls before one `drain()` wake the loop once.
final class WakeupSignal: Sendable {
    let fd: Int32

    init() throws(ZMQError) {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw ZMQError(call: "eventfd", errno: errno) }
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    func signal() {
        var one: UInt64 = 1
        while write(fd, &one, 8) < 0 && errno == EINTR {}
    }

    func drain() {
        var value: UInt64 = 0
        while read(fd, &value, 8) < 0 && errno == EINTR {}
    }
}
