import CZeroMQ
import SystemCall

#if canImport(Glibc)
    import Glibc
#endif

/// A Linux eventfd that wakes a ``SocketLoop`` out of `zmq_poll` when another thread hands it
/// work. Writes coalesce: many `signal()` calls before one `drain()` wake the loop once.
final class WakeupSignal: Sendable {
    let fd: Int32

    init() throws(SystemCallError) {
        fd = try systemCall("eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
    }

    deinit { closeDescriptor(fd) }

    /// Wakes the loop. `EAGAIN` means the counter is full: the loop has a wake-up waiting
    /// already. Any other failure (a closed descriptor) cannot be acted on here: the loop's own
    /// poll reports its descriptor set.
    func signal() {
        var one: UInt64 = 1
        _ = try? nonBlockingSystemCall("write") { write(fd, &one, 8) }
    }

    /// Empties the counter. `EAGAIN`: it was empty (another wake-up was drained first).
    func drain() {
        var value: UInt64 = 0
        _ = try? nonBlockingSystemCall("read") { read(fd, &value, 8) }
    }
}
