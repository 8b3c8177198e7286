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
public final class EventSubscriber: Sendable, AsyncSequence {
    public typealias Element = ReceivedEvent

    private let loop: SocketLoop
    private let stream: AsyncStream<ReceivedEvent>
    private let continuation: AsyncStream<ReceivedEvent>.Continuation
    private let status: Status

    /// What the socket thread reports; made before the socket starts, so no early event is lost.
    private final class Status: Sendable {
        let dropped = Atomic<Int>(0)
        let connected = LockedValue<Set<String>>([])
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
    /// (`[""]` for all). `bufferLimit` bounds events held for a slow consumer.
    public static func connect(
        endpoints: [String], topics: [String], security: ClientSecurity = .plaintext,
        highWaterMark: Int32 = BusDefaults.highWaterMark, bufferLimit: Int = 100_000, logger: Logger
    ) async throws -> EventSubscriber {
        let (stream, continuation) = AsyncStream.makeStream(of: ReceivedEvent.self, bufferingPolicy: .bufferingOldest(bufferLimit))
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
                    case .handshakeSucceeded: status.connected.withLock { _ = $0.insert(event.endpoint) }
                    case .disconnected: status.connected.withLock { _ = $0.remove(event.endpoint) }
                    default: break
                    }
                })
        ) { sockets in
            let socket = try sockets.makeMain(.subscriber)
            try socket.setHighWaterMarks(send: highWaterMark, receive: highWaterMark)
            try socket.set(ZMQ_CONNECT_TIMEOUT, ZMQSocket.defaultConnectTimeoutMs, "ZMQ_CONNECT_TIMEOUT")
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

    /// Whether the subscription's connection to at least one publisher is up.
    public var isConnected: Bool { !status.connected.withLock { $0.isEmpty } }

    /// Closes the socket and ends the sequence.
    public func close() async {
        await loop.stop()
        continuation.finish()
    }
}
