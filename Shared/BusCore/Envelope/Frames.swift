import Foundation

/// The frame layout on the wire.
///
/// Every message body is **one frame**: the envelope JSON, or, when there are attachments, a
/// binary container (``pack(_:_:)``) holding the envelope and each attachment. A ROUTER sees
/// `[routing…][body]`; a PUB sends `[topic 0x00 body]`, so subscriptions still match the topic as
/// a prefix. Bulk bytes still never travel as base64 inside the JSON.
///
/// Why one frame, where DESIGN.md drew `[empty][envelope][attachment…]`: libzmq 4.3 aborts the
/// whole process (`Assertion failed: !_more (src/fq.cpp:112)`) when a peer's pipe is torn down
/// between two frames of one message, which happens when a peer is killed while messages are in
/// flight (zeromq/libzmq#3485, #3663). A single-frame body never leaves a half-read message, so a
/// crashing peer can no longer take its correspondents down with it. The old layout is still
/// accepted on receipt.
public enum Frames {
    /// A request as a ROUTER sees it.
    public struct Routed: Sendable {
        /// The routing frames to send the reply back through.
        public var route: [Data]
        public var envelope: Data
        public var attachments: [Data]
    }

    public enum Malformed: Error, Sendable, Equatable {
        /// No routing frame, or nothing after the routing frames.
        case missingDelimiter
        /// A delimiter (old layout) but no envelope frame after it.
        case missingEnvelope
        /// A container whose lengths do not add up.
        case badContainer
    }

    /// First byte of a container; JSON never starts with it.
    static let containerMarker: UInt8 = 0
    /// Separates the topic from the body in an event frame.
    static let topicSeparator: UInt8 = 0

    /// One frame holding the envelope and its attachments: the envelope's bytes as they are when
    /// there are none (and they do not start with `0x00`), else `0x00`, the part count (UInt32, big-endian), each part's length (UInt64,
    /// big-endian), then the parts, envelope first.
    public static func pack(_ envelope: Data, _ attachments: [Data]) -> Data {
        // Bare only when it cannot be mistaken for a container (no envelope starts with 0x00, but
        // unpack(pack(x)) must give x back whatever x is).
        guard !attachments.isEmpty || envelope.first == containerMarker else { return envelope }
        let parts = [envelope] + attachments
        var out = Data(capacity: 5 + 8 * parts.count + parts.reduce(0) { $0 + $1.count })
        out.append(containerMarker)
        withUnsafeBytes(of: UInt32(parts.count).bigEndian) { out.append(contentsOf: $0) }
        for part in parts { withUnsafeBytes(of: UInt64(part.count).bigEndian) { out.append(contentsOf: $0) } }
        for part in parts { out.append(part) }
        return out
    }

    /// The same container as bytes, for the sockets; the envelope alone when there are no
    /// attachments (no copy then).
    package static func packBytes(_ envelope: [UInt8], _ attachments: [Data]) -> [UInt8] {
        guard !attachments.isEmpty || envelope.first == containerMarker else { return envelope }
        let count = attachments.count + 1
        let size = 5 + 8 * count + envelope.count + attachments.reduce(0) { $0 + $1.count }
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var writer = ByteWriter(buffer)
            writer.byte(containerMarker)
            writer.uint32(UInt32(count))
            writer.int64(Int64(envelope.count))
            for part in attachments { writer.int64(Int64(part.count)) }
            writer.bytes(envelope)
            for part in attachments { part.withUnsafeBytes { writer.bytes($0) } }
            initialized = writer.offset
        }
    }

    /// The envelope and attachments of one body frame (see ``pack(_:_:)``).
    public static func unpack(_ body: Data) -> Result<(envelope: Data, attachments: [Data]), Malformed> {
        guard body.first == containerMarker else { return .success((body, [])) }
        return body.withUnsafeBytes { bytes in unpack(bytes).map { (Data($0.envelope), $0.attachments) } }
    }

    /// The same on borrowed bytes (a received frame, read in place): the envelope stays a view of
    /// them, each attachment is copied out once.
    package static func unpack(_ body: UnsafeRawBufferPointer) -> Result<(envelope: UnsafeRawBufferPointer, attachments: [Data]), Malformed> {
        guard body.first == containerMarker else { return .success((body, [])) }
        var reader = ByteReader(body)
        _ = reader.byte()
        guard let count = reader.uint32(), count >= 1, count <= 65_536, Int(count) * 8 <= body.count else {
            return .failure(.badContainer)
        }
        var lengths: [Int] = []
        lengths.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let length = reader.int64().map({ UInt64(bitPattern: $0) }), length <= UInt64(body.count) else {
                return .failure(.badContainer)
            }
            lengths.append(Int(length))
        }
        guard let envelope = reader.bytes(lengths[0]) else { return .failure(.badContainer) }
        var attachments: [Data] = []
        attachments.reserveCapacity(lengths.count - 1)
        for length in lengths.dropFirst() {
            guard let part = reader.bytes(length) else { return .failure(.badContainer) }
            attachments.append(part.isEmpty ? Data() : Data(part))
        }
        guard reader.isAtEnd else { return .failure(.badContainer) }
        return .success((envelope, attachments))
    }

    /// Splits what a ROUTER received: routing frames, then one body frame — or, from a peer using
    /// the old layout, routing frames up to an empty delimiter, the envelope and attachments.
    public static func splitRouted(_ frames: [Data]) -> Result<Routed, Malformed> {
        if let delimiter = frames.firstIndex(where: \.isEmpty) {
            guard delimiter > 0 else { return .failure(.missingDelimiter) }
            guard delimiter + 1 < frames.count else { return .failure(.missingEnvelope) }
            return .success(
                Routed(
                    route: Array(frames[..<delimiter]), envelope: frames[delimiter + 1],
                    attachments: Array(frames[(delimiter + 2)...])))
        }
        guard frames.count >= 2, let body = frames.last else { return .failure(.missingDelimiter) }
        return unpack(body).map { Routed(route: Array(frames.dropLast()), envelope: $0.envelope, attachments: $0.attachments) }
    }

    /// What a ROUTER sends back: the route, then one body frame.
    public static func routed(_ route: [Data], _ envelope: Data, _ attachments: [Data]) -> [Data] {
        route + [pack(envelope, attachments)]
    }

    /// What a DEALER sends: one body frame.
    public static func dealer(_ envelope: Data, _ attachments: [Data]) -> [Data] {
        [pack(envelope, attachments)]
    }

    /// Splits what a DEALER received; `nil` when it is not of our layout.
    public static func splitDealer(_ frames: [Data]) -> (envelope: Data, attachments: [Data])? {
        if frames.count >= 2, frames[0].isEmpty { return (frames[1], Array(frames[2...])) }  // old layout
        guard frames.count == 1, case .success(let parts) = unpack(frames[0]) else { return nil }
        return parts
    }

    /// One event frame: the topic, a 0x00 separator, the body.
    public static func event(topic: String, _ envelope: Data, _ attachments: [Data]) -> [Data] {
        var frame = Data(topic.utf8)
        frame.append(topicSeparator)
        frame.append(pack(envelope, attachments))
        return [frame]
    }

    /// Splits a received event (either layout); `nil` when it is not of our layout.
    public static func splitEvent(_ frames: [Data]) -> (envelope: Data, attachments: [Data])? {
        if frames.count >= 2 { return (frames[1], Array(frames[2...])) }  // old layout: [topic][envelope][…]
        guard let frame = frames.first, let separator = frame.firstIndex(of: topicSeparator),
            case .success(let parts) = unpack(frame[(separator + 1)...])
        else { return nil }
        return parts
    }
}
