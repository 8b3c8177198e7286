import CZeroMQ
import Foundation
import Locks
import Logging
import Retry

/// Calls a service over a DEALER socket: many calls in flight from any number of tasks, replies
/// matched by correlation id, a deadline per call, and retries of idempotent calls with the same
/// idempotency key. Connected to several endpoints, it spreads requests over them (round robin).
public final class RPCClient: Sendable {
    public let name: String
    private let endpoints: [String]
    private let options: RPCClientOptions
    private let logger: Logger
    private let pending = PendingCalls()
    private let metrics: BusMetrics
    private let loop: LockedValue<SocketLoop?> = LockedValue(nil)
    private let liveEndpoints = LockedValue<Set<String>>([])

    private init(name: String, endpoints: [String], options: RPCClientOptions, logger: Logger) {
        self.name = name
        self.endpoints = endpoints
        self.options = options
        self.logger = logger
        self.metrics = BusMetrics(component: "rpc-client.\(name)")
    }

    /// The pause before an idempotent call is sent again after its server answered `unavailable`
    /// (busy, or its database away): 20 ms, 40 ms, … at most 200 ms, within the call's deadline.
    static let refusedBackoff = Backoff(first: .milliseconds(20), maximum: .milliseconds(200), growth: .linear)

    /// Connects to the service `name` at `endpoints`. Connecting does not wait for the server:
    /// requests wait (up to their deadline) until a connection is up.
    public static func connect(
        to name: String, endpoints: [String], security: ClientSecurity = .plaintext,
        options: RPCClientOptions = RPCClientOptions(), logger: Logger
    ) async throws -> RPCClient {
        guard !endpoints.isEmpty else { throw BusError(.invalidArgument, "no endpoints configured for \(name)") }
        let client = RPCClient(name: name, endpoints: endpoints, options: options, logger: logger)
        let received = ReceivedReplies()
        let loop = try await SocketLoop.start(
            name: "rpc-client-\(name)", policy: .wait, eventLoop: options.eventLoop, logger: logger,
            callbacks: LoopCallbacks(
                onMessage: { [weak client] frames in client?.receive(frames, into: received) },
                onBatchEnd: { [weak client] in client?.handOver(received) },
                onMonitorEvent: { [weak client] event in client?.observe(event) },
                onTick: { [weak client] now in client?.pending.expire(now: now, server: name) },
                onDropped: { [metrics = client.metrics] _, _ in metrics.increment("bus_requests_expired_unsent_total") })
        ) { sockets in
            let socket = try sockets.makeMain(.dealer)
            // Queue requests only on connections that are up, so a request never waits in the
            // pipe of a server that is not there while another one could answer it.
            try socket.set(ZMQ_IMMEDIATE, Int32(1), "ZMQ_IMMEDIATE")
            try socket.setHighWaterMarks(send: options.highWaterMark, receive: options.highWaterMark)
            try socket.limitMessageSize(options.maxMessageSize)
            try socket.enableHeartbeats(intervalMs: options.heartbeatIntervalMs, timeoutMs: options.heartbeatTimeoutMs)
            try socket.retryConnections(
                intervalMs: options.reconnectIntervalMs, maximumMs: options.reconnectIntervalMaxMs, connectTimeoutMs: options.connectTimeoutMs)
            try socket.apply(security)
            try sockets.attachMonitor(to: socket)
            for endpoint in endpoints { try socket.connect(endpoint) }
        }
        client.loop.withLock { $0 = loop }
        return client
    }

    /// How the client's socket thread has batched its work (see ``LoopStatistics``).
    public var loopStatistics: LoopStatistics { loop.withLock { $0 }?.counters.snapshot ?? LoopStatistics() }

    /// Whether at least one server connection has completed its handshake (heartbeats drop a
    /// connection whose peer went silent).
    public var isConnected: Bool { !liveEndpoints.withLock { $0.isEmpty } }

    /// Calls `method` and returns its reply, or throws a ``BusError`` (the server's, or
    /// `deadline_exceeded` / `unavailable` from the client side).
    public func call<M: RPCMethod>(
        _ method: M.Type, _ request: M.Request, principal: Principal? = nil, idempotencyKey: String? = nil,
        timeout: Duration? = nil, traceparent: String? = nil, attachments: [Data] = []
    ) async throws -> M.Reply {
        try await callWithAttachments(
            method, request, principal: principal, idempotencyKey: idempotencyKey, timeout: timeout,
            traceparent: traceparent, attachments: attachments
        ).reply
    }

    /// The same, for replies that carry binary attachments.
    public func callWithAttachments<M: RPCMethod>(
        _ method: M.Type, _ request: M.Request, principal: Principal? = nil, idempotencyKey: String? = nil,
        timeout: Duration? = nil, traceparent: String? = nil, attachments: [Data] = []
    ) async throws -> (reply: M.Reply, attachments: [Data]) {
        // The payload's JSON goes from the encoder's buffer into the envelope's bytes, never a `Data`.
        let payload = try BusJSON.encodeBytes(request)
        let key = idempotencyKey ?? (M.cachesReply ? MessageID.text(of: MessageID.make()) : nil)
        // `sentAt` is set per attempt by `exchange`: the initializer's default would read the clock for nothing.
        let envelope = Envelope(
            kind: .request, type: M.type, sentAt: .distantPast, traceparent: traceparent, principal: principal,
            idempotencyKey: key)
        let (reply, replyAttachments) = try await exchange(
            envelope, payload: payload, attachments: attachments, timeout: timeout, retry: M.isIdempotent)
        if let error = reply.error { throw error }
        return (try reply.decodePayload(M.Reply.self), replyAttachments)
    }

    /// Sends a request envelope as given and returns the reply envelope, error replies included
    /// (for generic tools such as `compass call`). With `retry`, attempts that get no reply or
    /// `unavailable` are sent again with the same idempotency key until the deadline.
    public func send(
        _ request: Envelope, attachments: [Data] = [], timeout: Duration? = nil, retry: Bool = false
    ) async throws -> (envelope: Envelope, attachments: [Data]) {
        try await exchange(request, payload: nil, attachments: attachments, timeout: timeout, retry: retry)
    }

    /// ``send(_:attachments:timeout:retry:)`` with the payload, when given, as JSON bytes beside
    /// the envelope rather than in it. `nonisolated(nonsending)`, as ``attemptOnce``: it runs on
    /// its caller's executor, so a call makes no executor switch of its own (each one looked up the
    /// task's preferred executor under its status lock, measured in `bus-bench` profiles).
    /// The clock is read once per attempt where a step needs "now", not once per step.
    private nonisolated(nonsending) func exchange(
        _ request: Envelope, payload: [UInt8]?, attachments: [Data], timeout: Duration?, retry: Bool
    ) async throws -> (envelope: Envelope, attachments: [Data]) {
        let timeout = timeout ?? options.defaultTimeout
        let clock = ContinuousClock()
        let started = clock.now
        var overall = started + timeout
        // Inside a handler, the call ends before the request being served must be answered.
        if let inherited = CallDeadline.current { overall = min(overall, inherited - CallDeadline.replyMargin) }
        guard overall > started else {
            throw BusError(.deadlineExceeded, "no time left of the caller's deadline to call \(request.type)")
        }
        let now = Date()
        let deadline = now.addingTimeInterval((overall - started).inSeconds)
        var attempts = CallAttempts<(envelope: Envelope, attachments: [Data])>(
            retry: retry, started: started, overall: overall, attemptTimeout: options.attemptTimeout, backoff: Self.refusedBackoff)
        while true {
            let attemptEnd = attempts.begin(now: clock.now)
            // Every attempt carries the call's one id: a server still running an earlier attempt
            // answers this one with that run's reply rather than running it again, and a late
            // reply to any attempt answers the call.
            var envelope = request
            envelope.sentAt = attempts.attempt == 1 ? now : Date()
            envelope.deadline = deadline
            do {
                let reply = try await attemptOnce(
                    envelope, payload: payload, attachments: attachments, until: attemptEnd, retriedUntil: retry ? overall : nil)
                let replied = clock.now
                switch attempts.replied(reply, error: reply.envelope.error?.code, now: replied) {
                case .sendAgain(let pause):
                    try await Task.sleep(for: pause)
                case .refusal(let refusal):
                    return refusal
                case .answer(let answer):
                    metrics.recordCall(request.type, replied - started)
                    return answer
                }
            } catch let error as BusError where error.code == .deadlineExceeded {
                switch attempts.silence(now: clock.now, connected: isConnected) {
                case .sendAgain:
                    metrics.increment("bus_rpc_retries_total", [("type", request.type)])
                    logger.debug("retrying call", metadata: ["type": "\(request.type)", "attempt": "\(attempts.attempt + 1)"])
                case .refusal(let refusal):
                    pending.forget(request.id)
                    return refusal
                case .unreachable:
                    pending.forget(request.id)
                    throw BusError.unreachable(name)
                case .deadlineExceeded:
                    pending.forget(request.id)
                    throw error
                }
            }
        }
    }

    /// Sends one attempt and waits for its reply until `expiresAt`. With `retriedUntil`, a reply
    /// to this attempt arriving after it expired is kept for the call's next attempt, which then
    /// sends nothing (``PendingCalls``).
    private nonisolated(nonsending) func attemptOnce(
        _ envelope: Envelope, payload: [UInt8]?, attachments: [Data], until expiresAt: ContinuousClock.Instant,
        retriedUntil: ContinuousClock.Instant?
    ) async throws -> PendingCalls.Reply {
        guard let loop = loop.withLock({ $0 }) else { throw BusError(.unavailable, "client for \(name) is closed") }
        let body = Frames.packBytes(EnvelopeCodec.encodeBytes(envelope, payload: payload), attachments)
        let id = envelope.id
        return try await withTaskCancellationHandler {
            // Unsafe rather than checked: ``PendingCalls`` resumes each call exactly once.
            try await withUnsafeThrowingContinuation { continuation in
                if pending.add(id, type: envelope.type, expiresAt: expiresAt, retriedUntil: retriedUntil, continuation) {
                    // Answered by a reply to an earlier attempt.
                } else if Task.isCancelled {
                    pending.fail(id, with: CancellationError())
                } else if !loop.send(OutgoingMessage(body: body, expiresAt: expiresAt)) {
                    pending.fail(id, with: BusError(.unavailable, "client for \(name) is closed"))
                }
            }
        } onCancel: {
            pending.fail(id, with: CancellationError())
        }
    }

    /// Fails every waiting call with `unavailable` and closes the socket.
    public func close() async {
        let loop = self.loop.withLock { loop in
            defer { loop = nil }
            return loop
        }
        pending.failAll(with: BusError(.unavailable, "client for \(name) closed"))
        await loop?.stop()
    }

    // MARK: On the socket's thread

    /// Decodes one reply, read in place, and keeps it for the end of the batch.
    private func receive(_ frames: ReceivedFrames, into received: ReceivedReplies) {
        guard let (body, attachments) = Frames.splitDealer(frames),
            let envelope = try? EnvelopeCodec.decode(body)
        else {
            metrics.increment("bus_malformed_total", [("reason", "reply")])
            return
        }
        guard let id = envelope.correlationId else {
            metrics.increment("bus_late_replies_total")
            return
        }
        received.batch.append(id, (envelope, attachments))
    }

    /// Resumes the callers of a batch's replies, under one lock of the pending table.
    private func handOver(_ received: ReceivedReplies) {
        let late = pending.complete(&received.batch)
        for _ in 0..<late { metrics.increment("bus_late_replies_total") }
    }

    /// The replies of the receive batch in progress. `@unchecked Sendable`: it is touched only by
    /// the loop's callbacks, which all run on the client's one socket thread.
    private final class ReceivedReplies: @unchecked Sendable {
        var batch = ReplyBatch()
    }

    private func observe(_ event: MonitorEvent) {
        switch event.kind {
        case .handshakeSucceeded:
            liveEndpoints.withLock { _ = $0.insert(event.endpoint) }
        case .disconnected:
            liveEndpoints.withLock { _ = $0.remove(event.endpoint) }
            logger.debug("bus peer disconnected", metadata: ["service": "\(name)", "endpoint": "\(event.endpoint)"])
        case .connectRetried:
            // Each failed attempt (name not resolved yet, refused, connect timed out) before the
            // next one, which libzmq makes after ZMQ_RECONNECT_IVL, doubling up to its maximum.
            metrics.increment("bus_connect_retries_total")
        case .handshakeFailed:
            metrics.increment("bus_handshakes_refused_total")
            logger.debug("bus handshake refused by server", metadata: ["service": "\(name)", "endpoint": "\(event.endpoint)"])
        default: break
        }
    }
}
