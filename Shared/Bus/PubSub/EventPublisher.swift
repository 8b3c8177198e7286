import Foundation
import Locks
import Logging

/// The event side of a service: one PUB socket; the topic frame is the event type.
///
/// PUB drops messages silently once a subscriber's queue holds `highWaterMark` of them, and a
/// subscriber that connects late misses what came before (slow joiner). Events that others must
/// act on therefore also go through the outbox, whose sequence numbers let a subscriber notice a
/// gap and catch up over RPC: pub/sub is the fast path, never the only one.
public final class EventPublisher: Sendable {
    public let name: String
    private let loop: SocketLoop
    private let bound: [String]

    private init(name: String, loop: SocketLoop, bound: [String]) {
        self.name = name
        self.loop = loop
        self.bound = bound
    }

    /// Binds the PUB socket, queueing up to `highWaterMark` events per subscriber.
    public static func bind(
        name: String, endpoints: [String], security: ServerSecurity = .plaintext,
        highWaterMark: Int32 = BusDefaults.highWaterMark, logger: Logger
    ) async throws -> EventPublisher {
        let bound = LockedValue<[String]>([])
        let loop = try await SocketLoop.start(
            name: "pub-\(name)", policy: .drop, logger: logger, callbacks: LoopCallbacks(onMessage: { _ in })
        ) { sockets in
            if case .curve(_, let policy) = security { try sockets.installZAPHandler(policy) }
            let socket = try sockets.makeMain(.publisher)
            try socket.setHighWaterMarks(send: highWaterMark, receive: highWaterMark)
            // A subscriber that went silent (frozen, or gone without a FIN) is dropped with the
            // events queued for it, rather than held, and its queue filled, for hours.
            try socket.enableHeartbeats(intervalMs: BusDefaults.heartbeatIntervalMs, timeoutMs: BusDefaults.heartbeatTimeoutMs)
            try socket.apply(security)
            for endpoint in endpoints {
                try socket.bind(endpoint)
                let actual = try socket.lastEndpoint()
                bound.withLock { $0.append(actual) }
            }
        }
        return EventPublisher(name: name, loop: loop, bound: bound.withLock { $0 })
    }

    public var boundEndpoints: [String] { bound }

    /// Publishes an event envelope as one frame `topic 0x00 body` (see ``Frames``), topic = type.
    public func publish(_ envelope: Envelope, attachments: [Data] = []) {
        loop.send(OutgoingMessage(frames: Frames.event(topic: envelope.type, EnvelopeCodec.encode(envelope), attachments), expiresAt: nil))
    }

    /// Publishes `payload` as an event of `type`.
    public func publish<Payload: Encodable>(type: String, _ payload: Payload, sequence: Int64? = nil) throws {
        publish(Envelope(kind: .event, type: type, sequence: sequence, payload: try BusJSON.encode(payload)))
    }

    public func close() async { await loop.stop() }
}
