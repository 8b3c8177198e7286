import CZeroMQ
import Foundation
import Locks
import Logging
import Synchronization

/// A received event: its envelope and any binary attachments.
public struct ReceivedEvent: Sendable {
    public var envelope: Envelope
    public var attachments: [Data]
    public var topic: String { envelope.type }
}

/// Subscribes to topic prefixes on one or more publishers and delivers events as an
/// `AsyncSequence`. Events that arrive while the consumer's buffer is full are dropped and
/// counted (``droppedCount``): subscribers that must see every event use the outbox's sequence
/// numbers to detect the gap and catch up.
///
/// A publisher that stops answering without closing its connection (a frozen process, a host
/// whose packets are dropped) would otherwise hold the subscription open and silent for the
/// kernel's keep-alive time, hours: ZMTP heartbeats notice it within
/// ``EventSubscriberOptions/heartbeatTimeoutMs``, the connection is dropped (``isConnected``
/// false, a warning logged) and retried with backoff until the publisher answers again.
public final class EventSubscriber: Sendable, AsyncSequence {
    public typealias Element = ReceivedEvent

    private let loop: SocketLoop
    private let stream: AsyncStream<ReceivedEvent>
    private let continuation: AsyncStream<ReceivedEvent>.Continuation
    private let status: Status

    /// What the socket thread reports; made before the socket starts, so no early event is lost.
    private final class Status: Sendable {
        let dropped = Atomic<Int>(0)
        let connectRetries = Atomic<Int>(0)
        let links = LockedValue(Links())
    }

    /// The publishers' connections: which are up, and which were up once and then lost (so that
    /// coming back is told apart from the first connection).
    struct Links {
        enum Change { case first, back, lost, none }
        private(set) var connected: Set<String> = []
        private var lost: Set<String> = []

        mutating func handshakeSucceeded(_ endpoint: String) -> Change {
            guard connected.insert(endpoint).inserted else { return .none }
            return lost.remove(endpoint) == nil ? .first : .back
        }

        mutating func disconnected(_ endpoint: String) -> Change {
            guard connected.remove(endpoint) != nil else { return .none }
            lost.insert(endpoint)
            return .lost
        }
    }

    private init(
        loop: SocketLoop, stream: AsyncStream<ReceivedEvent>, continuation: AsyncStream<ReceivedEvent>.Continuation,
        status: Status
    ) {
        self.loop = loop
        self.stream = stream
        self.continuation = continuation
        self.status = status
    }

    /// Connects to `endpoints` and subscribes to every topic starting with one of `topics`
    /// (`[""]` for all). Connecting does not wait for the publishers.
    public static func connect(
        endpoints: [String], topics: [String], security: ClientSecurity = .plaintext,
        options: EventSubscriberOptions = EventSubscriberOptions(), logger: Logger
    ) async throws -> EventSubscriber {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ReceivedEvent.self, bufferingPolicy: .bufferingOldest(options.bufferLimit))
        let status = Status()
        let loop = try await SocketLoop.start(
            name: "sub", policy: .drop, logger: logger,
            callbacks: LoopCallbacks(
                onMessage: { message in
                    guard let (body, attachments) = Frames.splitEvent(message.frames),
                        let envelope = try? EnvelopeCodec.decode(body)
                    else {
                        logger.debug("malformed event ignored")
                        return
                    }
                    let event = ReceivedEvent(envelope: envelope, attachments: attachments)
                    if case .dropped = continuation.yield(event) {
                        status.dropped.add(1, ordering: .relaxed)
                    }
                },
                onMonitorEvent: { event in
                    switch event.kind {
                    case .handshakeSucceeded:
                        if status.links.withLock({ $0.handshakeSucceeded(event.endpoint) }) == .back {
                            logger.info("events: connected to the publisher again", metadata: ["endpoint": "\(event.endpoint)"])
                        }
                    case .disconnected:
                        if status.links.withLock({ $0.disconnected(event.endpoint) }) == .lost {
                            logger.warning(
                                "events: connection to the publisher lost (closed, or silent past the heartbeat timeout); retrying",
                                metadata: ["endpoint": "\(event.endpoint)"])
                        }
                    case .connectRetried: status.connectRetries.add(1, ordering: .relaxed)
                    default: break
                    }
                })
        ) { sockets in
            let socket = try sockets.makeMain(.subscriber)
            try socket.setHighWaterMarks(send: options.highWaterMark, receive: options.highWaterMark)
            try socket.enableHeartbeats(intervalMs: options.heartbeatIntervalMs, timeoutMs: options.heartbeatTimeoutMs)
            try socket.retryConnections(
                intervalMs: options.reconnectIntervalMs, maximumMs: options.reconnectIntervalMaxMs, connectTimeoutMs: options.connectTimeoutMs)
            try socket.apply(security)
            for topic in topics { try socket.set(ZMQ_SUBSCRIBE, topic, "ZMQ_SUBSCRIBE") }
            try sockets.attachMonitor(to: socket)
            for endpoint in endpoints { try socket.connect(endpoint) }
        }
        return EventSubscriber(loop: loop, stream: stream, continuation: continuation, status: status)
    }

    public func makeAsyncIterator() -> AsyncStream<ReceivedEvent>.AsyncIterator { stream.makeAsyncIterator() }

    /// Events dropped because the consumer fell `bufferLimit` behind.
    public var droppedCount: Int { status.dropped.load(ordering: .relaxed) }

    /// Whether the subscription's connection to at least one publisher is up (heartbeats drop one
    /// whose publisher went silent).
    public var isConnected: Bool { !status.links.withLock { $0.connected.isEmpty } }

    /// Connection attempts that failed and were scheduled again (refused, unanswered, name not
    /// resolved), each after a longer wait up to ``EventSubscriberOptions/reconnectIntervalMaxMs``.
    public var connectRetries: Int { status.connectRetries.load(ordering: .relaxed) }

    /// Closes the socket and ends the sequence.
    public func close() async {
        await loop.stop()
        continuation.finish()
    }
}
