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
    private let part = ZMQMessagePart()
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

    /// Sends all frames as one message without blocking. Returns `false` when the socket cannot
    /// take the message now (`EAGAIN`: no peer or high-water mark reached); nothing was sent then.
    /// libzmq delivers a multipart message whole or not at all, and once the first frame is
    /// accepted the rest are too.
    func send(_ frames: [Data]) throws(ZMQError) -> Bool {
        let last = frames.count - 1
        for (index, frame) in frames.enumerated() {
            let flags = ZMQ_DONTWAIT | (index < last ? ZMQ_SNDMORE : 0)
            do {
                try zmqCall("zmq_send") {
                    frame.withUnsafeBytes { zmq_send(handle, $0.baseAddress, $0.count, flags) }
                }
            } catch where error.wouldBlock && index == 0 {
                return false
            }
        }
        return true
    }

    /// Receives one whole multipart message without blocking; `nil` when none is waiting.
    /// `userId` is the ZAP `User-Id` of the peer that sent it (CURVE), read from the transport.
    func receive() throws(ZMQError) -> ReceivedMessage? {
        guard let first = try part.receive(from: handle, call: "zmq_msg_recv") else { return nil }
        var frames = [first.bytes]
        // A ROUTER makes the routing-id frame itself, without metadata: take the peer's
        // User-Id from the first frame that came off the wire.
        var userId = first.userId
        var more = first.more
        while more {
            // The remaining frames of a message are already here: they arrive atomically.
            guard let next = try part.receive(from: handle, call: "zmq_msg_recv") else { break }
            frames.append(next.bytes)
            userId = userId ?? next.userId
            more = next.more
        }
        return ReceivedMessage(frames: frames, peerUserId: userId)
    }
}

/// A whole multipart message as it came off a socket.
public struct ReceivedMessage: Sendable {
    public var frames: [Data]
    /// The ZAP `User-Id` of the sending peer, set only for peers admitted by CURVE.
    public var peerUserId: String?
}
