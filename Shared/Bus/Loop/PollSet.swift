import CZeroMQ
import SystemCall

#if canImport(Glibc)
    import Glibc
#endif

/// The descriptors one loop sleeps on: its main socket's and its ZAP and monitor sockets'
/// signal descriptors (`ZMQ_FD`), and the wake-up eventfd. `poll` blocks; it runs only on the
/// loop's own thread.
///
/// Why not `zmq_poll`: it polls twice per call (once without waiting, then for real) and asks every
/// socket for `ZMQ_EVENTS` after each, and on Linux each of those is a `getpid` and a `poll` system
/// call inside libzmq: about ten system calls per sleep, with the monitor socket asked on every
/// wake-up. The loop instead sleeps in one `poll` and asks a socket only when its descriptor
/// signalled or it may have changed (``SocketLoop``).
struct PollSet {
    private var fds: [pollfd]
    private let zapIndex: Int?
    private let monitorIndex: Int?

    init(main: ZMQSocket, wakeupFD: Int32, zap: ZMQSocket?, monitor: ZMQSocket?) throws(ZMQError) {
        let readable = Int16(POLLIN)
        fds = [
            pollfd(fd: try main.signalDescriptor(), events: readable, revents: 0),
            pollfd(fd: wakeupFD, events: readable, revents: 0),
        ]
        if let zap {
            fds.append(pollfd(fd: try zap.signalDescriptor(), events: readable, revents: 0))
            zapIndex = fds.count - 1
        } else {
            zapIndex = nil
        }
        if let monitor {
            fds.append(pollfd(fd: try monitor.signalDescriptor(), events: readable, revents: 0))
            monitorIndex = fds.count - 1
        } else {
            monitorIndex = nil
        }
    }

    /// Waits for a descriptor; `timeoutMs` < 0 waits until one is ready. A signal (`EINTR`) is
    /// waited through (``systemCall(_:_:)`` retries it); a failure leaves nothing ready.
    mutating func wait(timeoutMs: Int) throws(ZMQError) {
        let count = nfds_t(fds.count)
        let timeout = Int32(clamping: timeoutMs)
        do {
            _ = try fds.withUnsafeMutableBufferPointer { buffer throws(SystemCallError) in
                try systemCall("poll") { Glibc.poll(buffer.baseAddress, count, timeout) }
            }
        } catch {
            for index in fds.indices { fds[index].revents = 0 }
            throw ZMQError(error)
        }
    }

    private func ready(_ index: Int?) -> Bool { index.map { fds[$0].revents != 0 } ?? false }

    var mainSignalled: Bool { ready(0) }
    var wakeupReady: Bool { ready(1) }
    var zapSignalled: Bool { ready(zapIndex) }
    var monitorSignalled: Bool { ready(monitorIndex) }
}
