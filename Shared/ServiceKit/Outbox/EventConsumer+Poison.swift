import Bus
import Contracts
import Foundation
import Logging
import Metrics
import Postgres
import Retry

/// How often an event whose handler throws is tried before it is parked as a dead letter, and
/// how long the consumer waits between tries (doubling from `firstDelay`, at most `maxDelay`).
public struct PoisonPolicy: Sendable {
    public var attempts: Int
    public var firstDelay: Duration
    public var maxDelay: Duration

    public init(attempts: Int = 5, firstDelay: Duration = .milliseconds(200), maxDelay: Duration = .seconds(10)) {
        precondition(attempts >= 1, "an event is tried at least once")
        self.attempts = attempts
        self.firstDelay = firstDelay
        self.maxDelay = maxDelay
    }

    /// The wait after the `failures`-th failed try.
    func delay(after failures: Int) -> Duration {
        Backoff(first: firstDelay, maximum: maxDelay).delay(after: failures)
    }
}

/// How often the event failing now has failed, and what its next failure calls for: the parking
/// rule as a pure value (tested with plain values in `PoisonEventTests`). In memory only: after a
/// restart an event gets its tries again, which only delays parking.
struct PoisonCount: Sendable {
    /// The event failing now and its failed tries.
    private(set) var failing: (sequence: Int64, attempts: Int)?

    enum Action: Equatable, Sendable {
        /// Wait, then try the event again; `attempt` tries have failed.
        case retry(attempt: Int, after: Duration)
        /// Its tries are spent: park it as a dead letter.
        case park(attempts: Int)
    }

    /// The handler threw for event `sequence`.
    mutating func failed(_ sequence: Int64, policy: PoisonPolicy) -> Action {
        let attempts = failing?.sequence == sequence ? failing!.attempts + 1 : 1
        failing = (sequence, attempts)
        return attempts >= policy.attempts ? .park(attempts: attempts) : .retry(attempt: attempts, after: policy.delay(after: attempts))
    }

    /// The cursor reached `last`: a failing event at or before it is done with.
    mutating func applied(through last: Int64) {
        if let current = failing, current.sequence <= last { failing = nil }
    }

    /// The failing event was parked.
    mutating func parked() { failing = nil }
}

/// The handler threw for event `sequence` (as opposed to the consumer's own bookkeeping failing).
struct HandlerFailure: Error, CustomStringConvertible {
    let sequence: Int64
    let underlying: any Error
    var description: String { "event \(sequence): \(underlying)" }

    /// Errors that say nothing about the event: the database is unreachable, shutting down,
    /// read-only, out of resources, or the statement lost a race or hit a time limit. They never
    /// count towards parking, so an outage cannot turn good events into dead letters.
    static func isTransient(_ error: any Error) -> Bool {
        (error as? PostgresError)?.isTransient == true
    }
}

extension EventConsumer {
    /// Applies `events` in order; an event whose handler keeps throwing is retried with backoff and
    /// then parked, and the events after it are applied. Returns the cursor afterwards.
    func applyParkingPoison(_ events: [Envelope]) async throws -> Int64 {
        while true {
            do {
                let last = try await applyInOrder(events)
                failures.withLock { $0.applied(through: last) }
                return last
            } catch let failure as HandlerFailure {
                // The events before the failing one still go in (their transaction rolled back with it).
                let before = events.filter { ($0.sequence ?? 0) < failure.sequence }
                if !before.isEmpty { _ = try await applyInOrder(before) }
                switch failures.withLock({ $0.failed(failure.sequence, policy: poison) }) {
                case .retry(let attempt, let pause):
                    logger.warning(
                        "event consumer: handler failed, retrying",
                        metadata: [
                            "publisher": "\(publisher)", "sequence": "\(failure.sequence)", "attempt": "\(attempt)",
                            "error": "\(failure.underlying)",
                        ])
                    try await Task.sleep(for: pause)
                    continue
                case .park(let attempts):
                    guard let event = events.first(where: { $0.sequence == failure.sequence }) else { throw failure }
                    try await park(event, error: failure.underlying, attempts: attempts)
                    failures.withLock { $0.parked() }
                }
            }
        }
    }

    /// Records `event` in `dead_letters` and moves the cursor past it, in one transaction, if the
    /// cursor is still just before it.
    private func park(_ event: Envelope, error: any Error, attempts: Int) async throws {
        guard let sequence = event.sequence else { return }
        let (schema, publisher, position) = (self.schema, self.publisher, self.position)
        let message = String(String(describing: error).prefix(2000))
        let parked = try await pool.withTransaction { db -> Bool in
            guard try position.lock(db) == sequence - 1 else { return false }
            try db.execute(
                """
                INSERT INTO \(schema).dead_letters (publisher, sequence, type, envelope, error, attempts)
                VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (publisher, sequence) DO NOTHING
                """, publisher, sequence, event.type, EnvelopeCodec.encode(event), message, attempts)
            try position.advance(db, to: sequence)
            return true
        }
        guard parked else { return }
        Counter(label: "events_dead_lettered_total", dimensions: [("publisher", publisher), ("type", event.type)]).increment()
        logger.error(
            "event consumer: event parked as a dead letter",
            metadata: [
                "publisher": "\(publisher)", "sequence": "\(sequence)", "type": "\(event.type)", "attempts": "\(attempts)",
                "error": "\(message)",
            ])
    }
}
