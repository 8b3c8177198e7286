import CZeroMQ
import Foundation

/// The frames of one received message, read in place: each frame stays in its own `zmq_msg_t`
/// (on the heap at a fixed address: libzmq forbids copying one by value), reused from message to
/// message. Readers look at libzmq's bytes without copying them; the bytes are valid only until
/// the socket's next receive, so a callback copies out what it keeps (``data(_:)``).
///
/// Why: copying every frame into a `Data` and collecting them in an array cost two or three
/// allocations per message before anything was decoded; an envelope is now decoded straight from
/// the frame, and only its payload is copied out.
final class ReceivedFrames {
    private var parts: [UnsafeMutablePointer<zmq_msg_t>] = []
    /// Frames in the message last received.
    private(set) var count = 0

    init() {}

    /// A message built by hand from `frames` (copied into fresh parts), as a socket would have
    /// received it: for checking what reads it without a socket.
    convenience init(frames: [Data]) {
        self.init()
        for (index, frame) in frames.enumerated() {
            let part = part(index)
            zmq_msg_close(part)
            zmq_msg_init_size(part, frame.count)
            if !frame.isEmpty { frame.withUnsafeBytes { zmq_msg_data(part).copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
        }
        count = frames.count
    }

    deinit {
        for part in parts {
            zmq_msg_close(part)
            part.deallocate()
        }
    }

    /// The part that receives frame `index`, made on first use.
    func part(_ index: Int) -> UnsafeMutablePointer<zmq_msg_t> {
        while parts.count <= index {
            let part = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: 1)
            zmq_msg_init(part)
            parts.append(part)
        }
        return parts[index]
    }

    func setCount(_ count: Int) { self.count = count }

    /// The bytes of frame `index`, borrowed from libzmq until the next receive.
    func bytes(_ index: Int) -> UnsafeRawBufferPointer {
        let part = parts[index]
        return UnsafeRawBufferPointer(start: zmq_msg_data(part), count: zmq_msg_size(part))
    }

    func size(_ index: Int) -> Int { zmq_msg_size(parts[index]) }

    /// A copy of frame `index`.
    func data(_ index: Int) -> Data {
        let bytes = bytes(index)
        return bytes.isEmpty ? Data() : Data(bytes)
    }

    /// Copies of every frame.
    var frames: [Data] { (0..<count).map(data) }

    /// The ZAP `User-Id` of the peer that sent the message (CURVE only; `nil` over plaintext).
    /// A ROUTER makes the routing-id frame itself, without metadata, so the first frame that came
    /// off the wire with one answers. Read only when asked: most messages never need it.
    var peerUserId: String? {
        for index in 0..<count {
            if let value = zmq_msg_gets(parts[index], "User-Id") { return String(cString: value) }
        }
        return nil
    }

    /// Gives back to libzmq the buffers of large frames (document chunks), which would otherwise be
    /// held until the next message arrives.
    func releaseLargeFrames() {
        for part in parts where zmq_msg_size(part) > 64 << 10 {
            zmq_msg_close(part)
            zmq_msg_init(part)
        }
    }
}
