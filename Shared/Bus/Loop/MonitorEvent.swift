import CZeroMQ
import Foundation

/// A transport event reported by `zmq_socket_monitor`: connections made and lost, handshakes
/// refused (bad CURVE key, plaintext peer), and so on.
public struct MonitorEvent: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case connected, disconnected, accepted, handshakeSucceeded, handshakeFailed
        /// A connecting socket's attempt failed (name not resolved, refused, connect timed out)
        /// and the next is scheduled; libzmq resolves the host name again at each attempt.
        case connectRetried
        case other(UInt16)
    }
    public var kind: Kind
    public var value: UInt32
    public var endpoint: String

    /// Parses the two frames libzmq sends on a monitor socket: 6 bytes (event id, value) and the endpoint.
    init?(frames: [Data]) {
        guard frames.count == 2, frames[0].count >= 6 else { return nil }
        let bytes = [UInt8](frames[0])
        let id = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
        value = UInt32(bytes[2]) | UInt32(bytes[3]) << 8 | UInt32(bytes[4]) << 16 | UInt32(bytes[5]) << 24
        endpoint = String(decoding: frames[1], as: UTF8.self)
        switch Int32(id) {
        case ZMQ_EVENT_CONNECTED: kind = .connected
        case ZMQ_EVENT_DISCONNECTED: kind = .disconnected
        case ZMQ_EVENT_ACCEPTED: kind = .accepted
        case ZMQ_EVENT_HANDSHAKE_SUCCEEDED: kind = .handshakeSucceeded
        case ZMQ_EVENT_CONNECT_RETRIED: kind = .connectRetried
        case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL, ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL,
            ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
            kind = .handshakeFailed
        default: kind = .other(id)
        }
    }

    static let watched: Int32 =
        ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_CONNECT_RETRIED
        | ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
        | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
}
