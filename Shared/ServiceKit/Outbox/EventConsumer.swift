import Bus
import Contracts
import Foundation
import Locks
import Logging
import Metrics
import Postgres
import Retry
import ServiceLifecycle

/// Applies another service's events to this service's state, each exactly once and in order.
///
/// Live events come over pub/sub; anything pub/sub lost (the consumer was down, joined late, or
/// fell behind the high-water mark) is fetched through `<publisher>.events.since`: at start, when
/// a live event's sequence shows a gap, and every `catchUpInterval` (which also finds a lost last
/// event, one no later event would reveal). Each batch is applied in one transaction together
/// with the consumer's cursor row, locked `FOR UPDATE`, so an event is applied exactly once even
/// with several instances of the consumer or after a crash between apply and acknowledgement.
///
/// An event whose handler throws is tried again with backoff (``PoisonPolicy``); once its tries
/// are spent it is parked in `dead_letters` with its error (counted in
/// `events_dead_lettered_total`) and the cursor moves past it. So order holds for every event
/// applied by the consumer; a parked event is applied later, out of order, only when an operator
/// retries it (``retryDeadLetter(sequence:)``).
public final class EventConsumer: Follower, Sendable {
    /// Applies one event inside the transaction that also advances the cursor. Throwing rolls both
    /// back; the event is tried again at the next catch-up.
    public typealias Apply = @Sendable (Envelope, isolated PostgresConnection) throws -> Void

    let publisher: String
    /// The publisher's events, all topics (events this consumer does not care about still
    /// advance its cursor).
    public let events: EventSubscriber
    private let client: RPCClient
    let pool: PostgresPool
    let schema: String
    /// This consumer's row in `schema.event_cursors`.
    let position: EventCursor
    /// How often it catches up when no gap showed one was needed.
    public let tickInterval: Duration
    let apply: Apply
    let poison: PoisonPolicy
    let logger: Logger
    /// The event that is failing now and how often it has failed.
    let failures = LockedValue(PoisonCount())

    /// - Parameters:
    ///   - publisher: the publishing service's name (`legal`): the cursor's key and the
    ///     `<publisher>.events.since` it asks.
    ///   - subscriber: subscribed to all of the publisher's topics (events this consumer does not
    ///     care about still advance its cursor: `apply` ignores them).
    ///   - client: an RPC client of the publisher, for catching up.
    ///   - schema: this service's schema, which holds `event_cursors`.
    public init(
        publisher: String, subscriber: EventSubscriber, client: RPCClient, pool: PostgresPool, schema: String,
        catchUpInterval: Duration = .seconds(5), poison: PoisonPolicy = PoisonPolicy(), logger: Logger,
        apply: @escaping Apply
    ) {
        self.publisher = publisher
        self.events = subscriber
        self.client = client
        self.pool = pool
        self.schema = OutboxSchema.validated(schema)
        self.position = EventCursor(schema: schema, publisher: publisher)
        self.tickInterval = catchUpInterval
        self.apply = apply
        self.poison = poison
        self.logger = logger
    }

    public func start() -> FailureStreak { FailureStreak() }

    /// Applies a live event (catching up when it shows a gap) or, on a tick, catches up; a failure
    /// is retried by the next catch-up.
    public func follow(_ input: FollowerInput, _ failures: inout FailureStreak) async {
        do {
            switch input {
            case .tick: try await catchUp()
            case .event(let event): try await handleLive(event)
            }
            if let streak = failures.succeeded() {
                logger.info("event consumer: caught up again", metadata: ["publisher": "\(publisher)", "failures": "\(streak)"])
            }
        } catch {
            let level = failures.failed()
            Counter(label: "events_consumer_failures_total", dimensions: [("publisher", publisher)]).increment()
            logger.log(
                level: level, "event consumer: failed, will catch up",
                metadata: ["publisher": "\(publisher)", "error": "\(error)", "failures": "\(failures.count)"])
        }
    }

    /// The last sequence applied from this publisher.
    public func cursor() async throws -> Int64 {
        let position = self.position
        return try await pool.withConnection { db in try position.read(db) }
    }

    private func handleLive(_ event: Envelope) async throws {
        guard let sequence = event.sequence else { return }
        let applied = try await applyParkingPoison([event])
        if applied < sequence {
            logger.debug("event consumer: gap, catching up", metadata: ["publisher": "\(publisher)", "seen": "\(sequence)", "applied": "\(applied)"])
            try await catchUp()
        }
    }

    /// Fetches and applies pages until nothing newer is published.
    public func catchUp() async throws {
        while true {
            let after = try await cursor()
            let page = try await client.events(of: publisher, after: after, principal: .service(publisher))
            guard !page.events.isEmpty else { return }
            let applied = try await applyParkingPoison(page.events)
            if applied >= page.latestSequence || applied == after { return }
        }
    }

    /// Applies the events that continue the cursor without a gap, in one transaction; returns the
    /// cursor afterwards. A handler's error comes out as ``HandlerFailure``, unless it is transient (then it is
    /// thrown as it is and the event is tried again at the next catch-up, without counting).
    func applyInOrder(_ events: [Envelope]) async throws -> Int64 {
        let (position, apply) = (self.position, self.apply)
        return try await pool.withTransaction { db in
            var last = try position.lock(db)
            let start = last
            events: for event in events {
                guard let sequence = event.sequence else { continue }  // not from the outbox
                switch EventOrder(sequence, after: last) {
                case .seen: continue events
                case .gap: break events  // catch-up fills it
                case .next: break
                }
                do { try apply(event, db) } catch  where !HandlerFailure.isTransient(error) {
                    throw HandlerFailure(sequence: sequence, underlying: error)
                }
                last = sequence
            }
            if last != start { try position.advance(db, to: last) }
            return last
        }
    }
}
