import CZeroMQ
import Foundation
import Locks
import Logging
import Metrics

/// The request/reply side of a service: one ROUTER socket bound to one or more endpoints, and
/// handlers registered by message type that run concurrently as tasks. A slow handler holds up
/// nobody else; the socket's own thread splits frames, reads headers, sends replies and starts
/// each handler, which runs there until its first suspension: a handler must not do long
/// synchronous work before its first `await`. Which request runs is ``RPCAdmission``'s decision.
public final class RPCServer: Sendable {
    public typealias RawHandler = @Sendable (Envelope, BusRequestContext) async throws -> (payload: Data?, attachments: [Data])

    public let name: String
    private let endpoints: [String]
    private let security: ServerSecurity
    private let options: RPCServerOptions
    private let logger: Logger
    private let metrics: BusMetrics
    /// The registered methods by message type (``register(_:_:)``, in `RPCServer+Registration.swift`).
    let handlers = LockedValue<[String: Registered]>([:])
    private let principalTrust: PrincipalTrust

    private let state: LockedValue<State>
    private let loop = LockedValue<SocketLoop?>(nil)

    private struct State {
        /// Every decision about which request runs (see ``RPCAdmission``).
        var admission: RPCAdmission<Registered>
        var boundEndpoints: [String] = []
        var drainWaiters: [CheckedContinuation<Void, Never>] = []
    }

    public init(
        name: String, endpoints: [String], security: ServerSecurity = .plaintext,
        options: RPCServerOptions = RPCServerOptions(), logger: Logger
    ) {
        self.name = name
        self.endpoints = endpoints
        self.security = security
        self.options = options
        self.logger = logger
        self.metrics = BusMetrics(component: "rpc-server.\(name)")
        self.principalTrust = PrincipalTrust(authenticatesPeers: security.isCurve, asserters: options.principalAsserters)
        self.state = LockedValue(
            State(admission: RPCAdmission(name: name, maxInFlight: options.maxInFlight, idempotency: options.idempotency)))
    }

    // MARK: Lifecycle

    /// Binds the socket (after the ZAP handler when CURVE is on) and starts serving.
    public func start() async throws {
        let (endpoints, security, options) = (self.endpoints, self.security, self.options)
        let bound = LockedValue<[String]>([])
        if case .plaintext = security {
            // A warning, once at start: swift-log's guidance lets a library warn at start-up of
            // a safer configuration the operator can choose, and nothing else says it.
            logger.warning("bus server without CURVE: any local peer may call it", metadata: ["server": "\(name)"])
        }
        _ = try await SocketLoop.start(
            name: "rpc-\(name)", policy: .drop, eventLoop: options.eventLoop, logger: logger,
            callbacks: LoopCallbacks(
                onMessage: { [weak self] frames in self?.receive(frames) },
                onMonitorEvent: { [weak self] event in self?.observe(event) },
                onDropped: { [metrics, logger, name] _, error in
                    metrics.increment("bus_replies_dropped_total", [("reason", error == nil ? "blocked" : "unroutable")])
                    logger.debug("reply dropped", metadata: ["server": "\(name)", "reason": "\(error.map { "\($0)" } ?? "peer not reading")"])
                }),
            // Held before the socket binds: a request may arrive, and be answered, at once.
            created: { [self] loop in self.loop.withLock { $0 = loop } },
            setup: { sockets in
                if case .curve(_, let policy) = security { try sockets.installZAPHandler(policy) }
                let socket = try sockets.makeMain(.router)
                try socket.set(ZMQ_ROUTER_MANDATORY, Int32(1), "ZMQ_ROUTER_MANDATORY")
                try socket.setHighWaterMarks(send: options.highWaterMark, receive: options.highWaterMark)
                try socket.limitMessageSize(options.maxMessageSize)
                try socket.enableHeartbeats(intervalMs: options.heartbeatIntervalMs, timeoutMs: options.heartbeatTimeoutMs)
                try socket.apply(security)
                try sockets.attachMonitor(to: socket)
                for endpoint in endpoints {
                    try socket.bind(endpoint)
                    let actual = try socket.lastEndpoint()
                    bound.withLock { $0.append(actual) }
                }
            })
        state.withLock { $0.boundEndpoints = bound.withLock { $0 } }
        logger.debug("bus server listening", metadata: ["server": "\(name)", "endpoints": "\(boundEndpoints)"])
    }

    /// The endpoints actually bound (a `*` port resolved), for tests and logs.
    public var boundEndpoints: [String] { state.withLock { $0.boundEndpoints } }

    /// How the server's socket thread has batched its work (see ``LoopStatistics``).
    public var loopStatistics: LoopStatistics { loop.withLock { $0 }?.counters.snapshot ?? LoopStatistics() }

    /// Requests currently running.
    public var inFlight: Int { state.withLock { $0.admission.inFlight } }

    /// Stops taking requests (new ones are answered `unavailable`), waits for running handlers up
    /// to the drain timeout so their replies go out, then closes the socket.
    public func shutdown() async {
        let idle = state.withLock { $0.admission.drain() }
        if !idle {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.waitForDrain() }
                group.addTask { [drainTimeout = options.drainTimeout] in try? await Task.sleep(for: drainTimeout) }
                await group.next()
                group.cancelAll()
                self.releaseDrainWaiters()
            }
        }
        await loop.withLock { $0 }?.stop()
    }

    private func waitForDrain() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.admission.inFlight == 0 { return true }
                state.drainWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func releaseDrainWaiters() {
        let waiters = state.withLock { state in
            defer { state.drainWaiters = [] }
            return state.drainWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: Receiving (on the socket's thread)

    /// One request, read in place from libzmq's buffers (only the route, the payload and any
    /// attachments are copied out), admitted or refused by ``RPCAdmission``.
    private func receive(_ frames: ReceivedFrames) {
        let arrived = ContinuousClock.now
        guard let (envelope, routed) = decode(frames) else { return }
        let registered = handlers.withLock { $0[envelope.type] }
        // Only methods whose replies are worth repeating are remembered: a read answered again
        // costs a read, while remembering every read's reply let any caller grow the server's
        // memory with fresh keys.
        let idempotency = registered.flatMap { registered -> RPCAdmission<Registered>.Idempotency? in
            guard registered.cachesReply, let key = envelope.idempotencyKey else { return nil }
            return .init(
                key: IdempotencyCache.Key(type: envelope.type, principal: envelope.principal, key: key),
                digest: registered.digest(envelope, routed.attachments))
        }
        let peer = frames.peerUserId
        let arrival = RPCAdmission.Arrival(
            envelope: envelope, route: routed.route, peer: peer, attachments: routed.attachments, method: registered,
            idempotency: idempotency)
        let sender = IdempotencyCache.Waiter(route: routed.route, requestId: envelope.id)
        // One reading of each clock per request: the deadline check, the handler's deadline and
        // its duration all start from them.
        let date = Date()
        switch state.withLock({ $0.admission.admit(arrival, now: arrived, date: date) }) {
        case .reject(let error, let countedAs):
            if let countedAs { metrics.increment("bus_rpc_rejected_total", [("code", countedAs)]) }
            send(envelope.reply(payload: nil, error: error), attachments: [], to: routed.route)
        case .joinRun:
            metrics.increment("bus_rpc_joined_total")
        case .joinKey:
            break
        case .replay(let outcome):
            metrics.increment("bus_rpc_replayed_total")
            reply(to: sender, type: envelope.type, outcome)
            answered()
        case .refuseReusedKey(let error):
            metrics.increment("bus_rpc_rejected_total", [("code", error.code.rawValue)])
            reply(to: sender, type: envelope.type, .init(payload: nil, attachments: [], error: error))
            answered()
        case .run(let admitted):
            run(admitted, envelope, routed, peer, arrived: arrived, date: date)
        }
    }

    /// The request's frames and envelope, or `nil` when they are malformed (answered here when
    /// the sender can be told).
    private func decode(_ frames: ReceivedFrames) -> (Envelope, Frames.RoutedView)? {
        let routed: Frames.RoutedView
        switch Frames.splitRouted(frames) {
        case .success(let split): routed = split
        case .failure(let problem):
            metrics.increment("bus_malformed_total", [("reason", "frames")])
            logger.debug("malformed frames", metadata: ["problem": "\(problem)", "frames": "\(frames.count)"])
            // ROUTER always puts the sender's identity first: answer there if there is one.
            if frames.count > 0, frames.size(0) > 0 {
                let error = BusError(.invalidArgument, "expected frames [empty][envelope][attachments…]")
                send(Envelope(kind: .reply, type: "error", error: error), attachments: [], to: [frames.data(0)])
            }
            return nil
        }
        do {
            return (try EnvelopeCodec.decode(routed.envelope), routed)
        } catch {
            metrics.increment("bus_malformed_total", [("reason", "envelope")])
            send(Envelope(kind: .reply, type: "error", error: error), attachments: [], to: routed.route)
            return nil
        }
    }

    /// Starts the handler on the socket's own thread (`Task.immediate`): it runs there up to its
    /// first suspension, so one that does not suspend (decode, compute, encode) replies with no
    /// thread hand-off at all, about half the wake-ups per call. One that awaits resumes on the
    /// process's ``BusEventLoop`` when the socket is polled by it (its task executor preference),
    /// else on the global executor. While a handler runs there the socket receives nothing, so
    /// handlers must not do long synchronous work on the loop (see ``BusEventLoop``).
    private func run(
        _ admitted: RPCAdmission<Registered>.Run, _ envelope: Envelope, _ routed: Frames.RoutedView, _ peer: String?,
        arrived: ContinuousClock.Instant, date: Date
    ) {
        let registered = admitted.method
        let context = BusRequestContext(
            envelope: envelope, peer: peer, principal: principalTrust.principal(claimed: envelope.principal, peer: peer),
            attachments: routed.attachments, servicesActingForUsers: options.servicesActingForUsers, logger: logger)
        let route = routed.route
        // The caller's deadline, on this process's clock: calls the handler makes end before it.
        let deadline = envelope.deadline.map { arrived + .milliseconds(Int64($0.timeIntervalSince(date) * 1000)) }
        Task.immediate(executorPreference: loop.withLock { $0?.eventLoop }) { [self] in
            let outcome = await outcome(of: registered, envelope, context, deadline: deadline)
            let ended = ContinuousClock.now
            let others = state.withLock { $0.admission.complete(admitted, outcome, now: ended) }
            reply(to: .init(route: route, requestId: envelope.id), type: envelope.type, outcome)
            registered.duration.record(duration: ended - arrived)
            for waiter in others { reply(to: waiter, type: envelope.type, outcome) }
            if let error = outcome.error {
                metrics.increment("bus_rpc_handled_total", [("type", envelope.type), ("code", error.code.rawValue)])
            } else {
                registered.succeeded.increment()
            }
            answered()
        }
    }

    /// What the handler answered, a thrown error made a reply. Runs where its caller runs (no
    /// executor switch; see ``Registered/handler``).
    private nonisolated(nonsending) func outcome(
        of registered: Registered, _ envelope: Envelope, _ context: BusRequestContext, deadline: ContinuousClock.Instant?
    ) async -> IdempotencyCache.Outcome {
        do {
            let (payload, attachments) = try await CallDeadline.$current.withValue(deadline) {
                try await registered.handler(envelope, context)
            }
            return .init(payload: payload, attachments: attachments, error: nil)
        } catch let error as BusError {
            return .init(payload: nil, attachments: [], error: error)
        } catch let error as any BusErrorConvertible {
            context.logger.debug("handler failed", metadata: ["error": "\(error)"])
            return .init(payload: nil, attachments: [], error: error.busError)
        } catch {
            // Never leak internals to the caller; the log has them. Info, not debug: it is the only
            // report of what went wrong (the caller sees `internal`, the metric a count).
            context.logger.info("handler failed", metadata: ["error": "\(error)"])
            return .init(payload: nil, attachments: [], error: BusError(.internal, "internal error in \(name)"))
        }
    }

    /// A run's, replay's or refusal's replies are sent: frees its place, and lets a shutdown
    /// waiting for the last one go on.
    private func answered() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard state.admission.answered() else { return [] }
            defer { state.drainWaiters = [] }
            return state.drainWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func reply(to waiter: IdempotencyCache.Waiter, type: String, _ outcome: IdempotencyCache.Outcome) {
        let envelope = Envelope(kind: .reply, type: type, correlationId: waiter.requestId, error: outcome.error)
        send(envelope, payload: outcome.payload, attachments: outcome.attachments, to: waiter.route)
    }

    private func send(_ envelope: Envelope, payload: [UInt8]? = nil, attachments: [Data], to route: [Data]) {
        let body = Frames.packBytes(EnvelopeCodec.encodeBytes(envelope, payload: payload), attachments)
        guard let loop = loop.withLock({ $0 }), loop.send(OutgoingMessage(route: route, body: body, expiresAt: nil)) else {
            metrics.increment("bus_replies_dropped_total", [("reason", "closed")])
            logger.debug("reply dropped: socket closed", metadata: ["server": "\(name)", "type": "\(envelope.type)"])
            return
        }
    }

    private func observe(_ event: MonitorEvent) {
        if event.kind == .handshakeFailed {
            metrics.increment("bus_handshakes_refused_total")
            logger.debug("bus handshake refused", metadata: ["server": "\(name)", "endpoint": "\(event.endpoint)"])
        }
    }
}
