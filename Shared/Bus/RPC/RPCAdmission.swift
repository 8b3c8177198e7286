import Foundation

/// What an ``RPCServer`` does with each request, decided with no I/O: an arrival, the end of a
/// run and the sending of its replies are mutating calls here that say what to do, and the server
/// does it (replies, metrics, starting the handler) outside its lock. Time is passed in, so every
/// decision is tested with plain values (`Tests/BusTests/RPCAdmissionTests.swift`), the way
/// ``PoolState`` is. Generic over what the server registers per method, handed back with a run.
///
/// It keeps the requests running by id (``RunningRequests``: a retry under the same id joins the
/// run), the outcomes kept by idempotency key (``IdempotencyCache``: a retry under the same key
/// joins the run or is answered with its outcome) and the count of requests admitted.
///
/// Invariant: `inFlight` counts the runs from ``Action/run(_:)`` to ``answered()``, and the
/// replays and reused-key refusals from their action to ``answered()``; it never exceeds
/// `maxInFlight`. A shutdown waits for it to reach zero, so those replies go out first.
struct RPCAdmission<Method> {
    /// The server's name, for the messages of its refusals.
    let name: String
    let maxInFlight: Int
    private(set) var inFlight = 0
    private(set) var draining = false
    private var running = RunningRequests()
    private var kept: IdempotencyCache

    init(name: String, maxInFlight: Int, idempotency: IdempotencyLimits) {
        self.name = name
        self.maxInFlight = maxInFlight
        kept = IdempotencyCache(limits: idempotency)
    }

    /// One request, its envelope decoded.
    struct Arrival {
        var envelope: Envelope
        /// Where its reply goes: the ROUTER's identity frames.
        var route: [Data]
        /// The sender's CURVE identity; `nil` over plaintext.
        var peer: String?
        var attachments: [Data]
        /// What the server registered for the request's type; `nil` when nothing is.
        var method: Method?
        /// Set when the method keeps its replies (``RPCMethod/cachesReply``) and the request
        /// carries a key. The server computes the digest before admission, outside its lock: for
        /// some methods it decodes the payload.
        var idempotency: Idempotency?
    }

    /// A request's idempotency key, scoped by its type and principal, and the digest that tells a
    /// retry from another request under the same key.
    struct Idempotency {
        var key: IdempotencyCache.Key
        var digest: Int
    }

    /// A request admitted to run, handed back with its outcome to ``complete(_:_:now:)``.
    struct Run {
        let id: UUID
        let method: Method
        /// Its key when its outcome is kept for retries.
        let key: IdempotencyCache.Key?
    }

    enum Action {
        /// Answer `error`; nothing was admitted. `countedAs` is the `code` label of
        /// `bus_rpc_rejected_total`; `nil` for the server's own state (shutting down, at
        /// capacity), which is not the request's fault.
        case reject(BusError, countedAs: String?)
        /// A retry of the request running under the same id (an attempt whose reply was late):
        /// that run's reply answers this sender too. Nothing to send now.
        case joinRun
        /// A retry, under another id, of the request running under the same idempotency key: its
        /// sender is among the waiters ``complete(_:_:now:)`` returns. Nothing to send now.
        case joinKey
        /// A retry of a request done under the same idempotency key: answer with its outcome,
        /// then call ``answered()``.
        case replay(IdempotencyCache.Outcome)
        /// The idempotency key was used, within its window, for another request: answer `error`
        /// rather than another action's reply, then call ``answered()``.
        case refuseReusedKey(BusError)
        /// Run the handler, give its outcome to ``complete(_:_:now:)``, and call ``answered()``
        /// once the replies are sent.
        case run(Run)
    }

    /// Decides about one request arriving at `now` (`date` is the wall clock its deadline is read
    /// against). Checks run in this order: the envelope, the method, shutting down, the request
    /// id, capacity, the idempotency key.
    mutating func admit(_ arrival: Arrival, now: ContinuousClock.Instant, date: Date) -> Action {
        let envelope = arrival.envelope
        if let invalid = invalidity(of: envelope, date: date) { return .reject(invalid, countedAs: invalid.code.rawValue) }
        guard let method = arrival.method else {
            return .reject(BusError(.invalidArgument, "unknown message type \(envelope.type) for \(name)"), countedAs: "unknown_type")
        }
        if draining { return .reject(BusError(.unavailable, "\(name) is shutting down"), countedAs: nil) }
        let request = RunningRequests.Request(
            type: envelope.type, principal: envelope.principal, peer: arrival.peer, payload: envelope.payload,
            attachments: arrival.attachments, route: arrival.route)
        switch running.admit(envelope.id, request) {
        case .run: break
        case .joined: return .joinRun
        case .conflict:
            let error = BusError(.invalidArgument, "another request with this id is running; every request needs its own id")
            return .reject(error, countedAs: "request_id_in_use")
        }
        guard inFlight < maxInFlight else {
            _ = running.finish(envelope.id)
            return .reject(BusError(.unavailable, "\(name) is at capacity"), countedAs: nil)
        }
        guard let idempotency = arrival.idempotency else {
            inFlight += 1
            return .run(Run(id: envelope.id, method: method, key: nil))
        }
        let waiter = IdempotencyCache.Waiter(route: arrival.route, requestId: envelope.id)
        switch kept.admit(key: idempotency.key, digest: idempotency.digest, waiter: waiter, now: now) {
        case .run:
            inFlight += 1
            return .run(Run(id: envelope.id, method: method, key: idempotency.key))
        case .joined:
            // Answered by the run under its key: its own id runs nothing and is free again.
            _ = running.finish(envelope.id)
            return .joinKey
        case .replay(let outcome):
            _ = running.finish(envelope.id)
            inFlight += 1
            return .replay(outcome)
        case .mismatch:
            _ = running.finish(envelope.id)
            inFlight += 1
            return .refuseReusedKey(
                BusError(.idempotencyKeyReused, "this idempotency key was used for a different request; use a new key for a new action"))
        }
    }

    /// A run's handler returned `outcome` at `now`. Ends the run before its replies go out, so a
    /// retry arriving later runs again (or is answered with the kept outcome) rather than joining
    /// a run already answered. Returns the other senders to answer with the same outcome: retries
    /// joined under the run's id, then those joined under its idempotency key.
    mutating func complete(_ run: Run, _ outcome: IdempotencyCache.Outcome, now: ContinuousClock.Instant) -> [IdempotencyCache.Waiter] {
        var waiters = running.finish(run.id).map { IdempotencyCache.Waiter(route: $0, requestId: run.id) }
        if let key = run.key { waiters += kept.complete(key, outcome, now: now) }
        return waiters
    }

    /// The replies of a run, a replay or a refused reused key are sent: frees its place. True when
    /// nothing admitted is left, which a shutdown waits for.
    mutating func answered() -> Bool {
        precondition(inFlight > 0, "answered more requests than were admitted")
        inFlight -= 1
        return inFlight == 0
    }

    /// Refuses every request from now on (`unavailable`); true when nothing admitted is left.
    mutating func drain() -> Bool {
        draining = true
        return inFlight == 0
    }

    /// Rejections of the envelope alone: a newer protocol, a non-request, a malformed key, a
    /// deadline already passed at `date`.
    private func invalidity(of envelope: Envelope, date: Date) -> BusError? {
        if envelope.v > Envelope.protocolVersion {
            return BusError(
                .invalidArgument, "protocol version \(envelope.v) is not supported; \(name) speaks \(Envelope.protocolVersion)",
                details: ["supportedVersion": String(Envelope.protocolVersion)])
        }
        if envelope.kind != .request { return BusError(.invalidArgument, "expected a request, got \(envelope.kind.rawValue)") }
        if let key = envelope.idempotencyKey, !IdempotencyKeyRule.isValidBusKey(key) {
            return BusError(
                .invalidArgument, "the idempotency key must be 1 to \(IdempotencyKeyRule.busKeyMaximumBytes) bytes",
                details: ["maximumBytes": String(IdempotencyKeyRule.busKeyMaximumBytes)])
        }
        if let deadline = envelope.deadline, deadline < date {
            return BusError(.deadlineExceeded, "request arrived after its deadline")
        }
        return nil
    }
}

extension RPCAdmission: Sendable where Method: Sendable {}
extension RPCAdmission.Arrival: Sendable where Method: Sendable {}
extension RPCAdmission.Idempotency: Sendable where Method: Sendable {}
extension RPCAdmission.Run: Sendable where Method: Sendable {}
extension RPCAdmission.Action: Sendable where Method: Sendable {}
