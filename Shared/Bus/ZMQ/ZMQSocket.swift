import CZeroMQ
import Foundation

/// One libzmq socket. Not thread-safe (libzmq sockets are not): a socket is created, used and
/// closed on its ``SocketLoop`` thread only.
final class ZMQSocket {
    enum Kind {
        case router, dealer, publisher, subscriber, reply, pair
        var raw: Int32 {
            switch self {
            case .router: ZMQ_ROUTER
            case .dealer: ZMQ_DEALER
            case .publisher: ZMQ_PUB
            case .subscriber: ZMQ_SUB
            case .reply: ZMQ_REP
            case .pair: ZMQ_PAIR
            }
        }
    }

    let handle: UnsafeMutableRawPointer
    let kind: Kind
    /// Keeps the context alive until this socket has closed (see ``ZMQContext``).
    private let context: ZMQContext
    /// The frames of the message last received (see ``receive(into:)``).
    let received = ReceivedFrames()
    private var closed = false

    init(_ kind: Kind, context: ZMQContext) throws(ZMQError) {
        self.kind = kind
        self.context = context
        handle = try zmqCall("zmq_socket") { zmq_socket(context.handle, kind.raw) }
        // Never let close or context termination wait for unsent messages.
        try set(ZMQ_LINGER, Int32(0), "ZMQ_LINGER")
    }

    deinit { close() }

    func close() {
        guard !closed else { return }
        closed = true
        zmq_close(handle)
    }

    // MARK: Options

    /// `ZMQ_CONNECT_TIMEOUT` of connecting sockets: long enough for one lost SYN's retransmission
    /// (after 1 s), short enough that a connect to an address that drops packets is given up, and
    /// the host name resolved again, within seconds rather than the kernel's two minutes.
    static let defaultConnectTimeoutMs: Int32 = 2000

    func set(_ option: Int32, _ value: Int32, _ name: String) throws(ZMQError) {
        var value = value
        try zmqCall("zmq_setsockopt(\(name))") {
            zmq_setsockopt(handle, option, &value, MemoryLayout<Int32>.size)
        }
    }

    func set(_ option: Int32, _ value: Int64, _ name: String) throws(ZMQError) {
        var value = value
        try zmqCall("zmq_setsockopt(\(name))") {
            zmq_setsockopt(handle, option, &value, MemoryLayout<Int64>.size)
        }
    }

    func set(_ option: Int32, _ value: String, _ name: String) throws(ZMQError) {
        let bytes = Array(value.utf8)
        try zmqCall("zmq_setsockopt(\(name))") {
            bytes.withUnsafeBytes { zmq_setsockopt(handle, option, $0.baseAddress, $0.count) }
        }
    }

    func set(_ option: Int32, bytes: [UInt8], _ name: String) throws(ZMQError) {
        try zmqCall("zmq_setsockopt(\(name))") {
            bytes.withUnsafeBytes { zmq_setsockopt(handle, option, $0.baseAddress, $0.count) }
        }
    }

    /// The endpoint actually bound (resolves `tcp://127.0.0.1:*` to the chosen port).
    func lastEndpoint() throws(ZMQError) -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        var size = buffer.count
        try zmqCall("zmq_getsockopt(ZMQ_LAST_ENDPOINT)") {
            zmq_getsockopt(handle, ZMQ_LAST_ENDPOINT, &buffer, &size)
        }
        return String(nulTerminated: buffer)
    }

    /// The descriptor libzmq signals when the socket has commands to process (`ZMQ_FD`). It is
    /// edge-triggered: readable says "look again", not "a message is waiting", and it is reset
    /// only by a receive that comes back empty or by ``events()``.
    func signalDescriptor() throws(ZMQError) -> Int32 {
        var fd: Int32 = -1
        var size = MemoryLayout<Int32>.size
        try zmqCall("zmq_getsockopt(ZMQ_FD)") { zmq_getsockopt(handle, ZMQ_FD, &fd, &size) }
        return fd
    }

    /// `ZMQ_POLLIN`/`ZMQ_POLLOUT` as of now (`ZMQ_EVENTS`), after processing pending commands.
    func events() throws(ZMQError) -> Int32 {
        var events: Int32 = 0
        var size = MemoryLayout<Int32>.size
        try zmqCall("zmq_getsockopt(ZMQ_EVENTS)") { zmq_getsockopt(handle, ZMQ_EVENTS, &events, &size) }
        return events
    }

    // MARK: Wiring

    func bind(_ endpoint: String) throws(ZMQError) {
        try zmqCall("zmq_bind(\(endpoint))") { zmq_bind(handle, endpoint) }
    }

    func connect(_ endpoint: String) throws(ZMQError) {
        try zmqCall("zmq_connect(\(endpoint))") { zmq_connect(handle, endpoint) }
    }

    func monitor(_ endpoint: String, events: Int32) throws(ZMQError) {
        try zmqCall("zmq_socket_monitor(\(endpoint))") { zmq_socket_monitor(handle, endpoint, events) }
    }

    // MARK: Messages

    /// Sends one message without blocking. Returns `false` when the socket cannot take it now
    /// (`EAGAIN`: no peer or high-water mark reached); nothing was sent then. libzmq delivers a
    /// multipart message whole or not at all, and once the first frame is accepted the rest are too.
    func send(_ content: OutgoingMessage.Content) throws(ZMQError) -> Bool {
        switch content {
        case .frames(let frames):
            let last = frames.count - 1
            for (index, frame) in frames.enumerated() {
                let more = index < last
                guard try sendFrame(first: index == 0, { frame.withUnsafeBytes { raw(send: $0, more: more) } }) else { return false }
            }
        case .body(let route, let body):
            for (index, frame) in route.enumerated() {
                guard try sendFrame(first: index == 0, { frame.withUnsafeBytes { raw(send: $0, more: true) } }) else { return false }
            }
            guard try sendFrame(first: route.isEmpty, { body.withUnsafeBytes { raw(send: $0, more: false) } }) else { return false }
        }
        return true
    }

    private func raw(send bytes: UnsafeRawBufferPointer, more: Bool) -> Int32 {
        zmq_send(handle, bytes.baseAddress, bytes.count, ZMQ_DONTWAIT | (more ? ZMQ_SNDMORE : 0))
    }

    /// One frame sent by `call`; `false` only when the message's first frame would block.
    private func sendFrame(first: Bool, _ call: () -> Int32) throws(ZMQError) -> Bool {
        do {
            try zmqCall("zmq_send", call)
            return true
        } catch  where error.wouldBlock && first {
            return false
        }
    }

    /// Receives one whole multipart message into ``received`` without blocking; `false` when none
    /// is waiting. The frames stay readable in place until the next receive.
    func receive(into frames: ReceivedFrames) throws(ZMQError) -> Bool {
        var index = 0
        while true {
            let part = frames.part(index)
            do {
                try zmqCall("zmq_msg_recv") { zmq_msg_recv(part, handle, ZMQ_DONTWAIT) }
            } catch  where error.wouldBlock {
                // Only the first frame may be missing: the rest of a message arrive with it.
                if index == 0 { return false }
                break
            }
            guard zmq_msg_more(part) != 0 else { break }
            index += 1
        }
        frames.setCount(index + 1)
        return true
    }

    /// Receives one whole multipart message as copies, without blocking; `nil` when none is
    /// waiting (the monitor and ZAP sockets, whose messages are rare).
    func receive() throws(ZMQError) -> ReceivedMessage? {
        guard try receive(into: received) else { return nil }
        return ReceivedMessage(frames: received.frames, peerUserId: received.peerUserId)
    }
}

/// A whole multipart message as it came off a socket.
public struct ReceivedMessage: Sendable {
    public var frames: [Data]
    /// The ZAP `User-Id` of the sending peer, set only for peers admitted by CURVE.
    public var peerUserId: String?
}
