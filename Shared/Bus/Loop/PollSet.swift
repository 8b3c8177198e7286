import CZeroMQ

/// The `zmq_pollitem_t` array of one loop: its main socket, the wake-up eventfd, and the
/// optional ZAP and monitor sockets. `zmq_poll` blocks; it runs only on the loop's own thread.
struct PollSet {
    private var items: [zmq_pollitem_t]
    private let zapIndex: Int?
    private let monitorIndex: Int?

    init(main: ZMQSocket, wakeupFD: Int32, zap: ZMQSocket?, monitor: ZMQSocket?) {
        let readable = Int16(ZMQ_POLLIN)
        items = [
            zmq_pollitem_t(socket: main.handle, fd: 0, events: readable, revents: 0),
            zmq_pollitem_t(socket: nil, fd: wakeupFD, events: readable, revents: 0),
        ]
        if let zap {
            items.append(zmq_pollitem_t(socket: zap.handle, fd: 0, events: readable, revents: 0))
            zapIndex = items.count - 1
        } else { zapIndex = nil }
        if let monitor {
            items.append(zmq_pollitem_t(socket: monitor.handle, fd: 0, events: readable, revents: 0))
            monitorIndex = items.count - 1
        } else { monitorIndex = nil }
        // A PUB socket cannot receive: polling it for input would fail.
        if main.kind == .publisher { items[0].events = 0 }
    }

    mutating func wantWritable(_ writable: Bool) {
        var events = items[0].events & ~Int16(ZMQ_POLLOUT)
        if writable { events |= Int16(ZMQ_POLLOUT) }
        items[0].events = events
    }

    /// Waits for readiness; `timeoutMs` < 0 waits until something happens.
    mutating func wait(timeoutMs: Int) throws(ZMQError) {
        let count = Int32(items.count)
        try zmqCall("zmq_poll") { items.withUnsafeMutableBufferPointer { zmq_poll($0.baseAddress, count, timeoutMs) } }
    }

    var mainReadable: Bool { items[0].revents & Int16(ZMQ_POLLIN) != 0 }
    var wakeupReady: Bool { items[1].revents & Int16(ZMQ_POLLIN) != 0 }
    var zapReadable: Bool { zapIndex.map { items[$0].revents & Int16(ZMQ_POLLIN) != 0 } ?? false }
    var monitorReadable: Bool { monitorIndex.map { items[$0].revents & Int16(ZMQ_POLLIN) != 0 } ?? false }
}
