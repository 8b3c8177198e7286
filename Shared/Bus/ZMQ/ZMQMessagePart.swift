import CZeroMQ
import Foundation

/// A reusable receive buffer for one `zmq_msg_t`. libzmq forbids copying a `zmq_msg_t` by value,
/// so it lives on the heap at a fixed address for the lifetime of its socket.
final class ZMQMessagePart {
    private let message = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: 1)

    init() { zmq_msg_init(message) }

    deinit {
        zmq_msg_close(message)
        message.deallocate()
    }

    /// Receives the next frame without blocking; `nil` when none is waiting (`EAGAIN`).
    /// Returns the frame's bytes (copied out, any size) and whether more frames follow.
    func receive(from socket: UnsafeMutableRawPointer, call: @autoclosure () -> String)
        throws(ZMQError) -> (bytes: Data, more: Bool, userId: String?)?
    {
        do {
            try zmqCall(call()) { zmq_msg_recv(message, socket, ZMQ_DONTWAIT) }
        } catch where error.wouldBlock {
            return nil
        }
        let size = zmq_msg_size(message)
        let bytes = size == 0 ? Data() : Data(bytes: zmq_msg_data(message), count: size)
        let more = zmq_msg_more(message) != 0
        // Set by the ZAP handler for CURVE peers; absent (NULL) for plaintext peers.
        let userId = zmq_msg_gets(message, "User-Id").map { String(cString: $0) }
        return (bytes, more, userId)
    }
}
