import Bus
import Foundation
import Logging
import Postgres
import ServiceLifecycle
import Synchronization

/// Numbers committed outbox rows and publishes them on the service's PUB socket.
///
/// One relay per schema numbers at a time (a transaction-scoped advisory lock), so the sequence
/// is gap-free even with several instances of a service. It runs when ``Outbox/committed()`` is
/// called and at least every `pollInterval`, which also picks up events another instance wrote.
/// Publishing happens after the numbering commits; a crash in between loses nothing, because
/// subscribers catch up from the table through `<service>.events.since`.
public final class OutboxRelay: Service, Sendable {
    private let outbox: Outbox
    private let pool: PostgresPool
    private let publisher: EventPublisher
    private let pollInterval: Duration
    private let batchSize: Int
    private let logger: Logger
    private let signal: AsyncStream<Void>
    private let signalContinuation: AsyncStream<Void>.Continuation

    public init(
        outbox: Outbox, pool: PostgresPool, publisher: EventPublisher, pollInterval: Duration = .milliseconds(500),
        batchSize: Int = 1000, logger: Logger
    ) {
        self.outbox = outbox
        self.pool = pool
        self.publisher = publisher
        self.pollInterval = pollInterval
        self.batchSize = batchSize
        self.logger = logger
        (signal, signalContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        outbox.connect { [signalContinuation] in signalContinuation.yield() }
    }

    public func run() async throws {
        let poller = Task { [signalContinuation, pollInterval] in
            while !Task.isCancelled {
                try? await Task.sleep(for: pollInterval)
                signalContinuation.yield()
            }
        }
        defer { poller.cancel() }
        signalContinuation.yield()
        await withGracefulShutdownHandler {
            for await _ in signal.cancelOnGracefulShutdown() {
                do {
                    while try await relayBatch() == batchSize {}
                } catch {
                    logger.warning("outbox relay: batch failed, will retry", metadata: ["schema": "\(outbox.schema)", "error": "\(error)"])
                }
            }
        } onGracefulShutdown: { [signalContinuation] in
            signalContinuation.finish()
        }
    }

    /// Numbers and publishes up to `batchSize` rows; returns how many.
    @discardableResult
    public func relayBatch() async throws -> Int {
        let schema = outbox.schema
        let limit = batchSize
        let events: [Envelope] = try await pool.withTransaction { db in
            let locked = try db.query("SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))", "compass.outbox.\(schema)")
            guard try locked[0].decode(Bool.self, column: 0) else { return [] }
            let rows = try db.query(
                """
                WITH base AS (SELECT coalesce(max(sequence), 0) AS last FROM \(schema).outbox),
                     next AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM \(schema).outbox
                              WHERE sequence IS NULL ORDER BY id LIMIT $1)
                UPDATE \(schema).outbox o SET sequence = base.last + next.n, published_at = now()
                FROM next, base WHERE o.id = next.id
                RETURNING \(OutboxRow.columns)
                """, limit)
            return try rows.map(OutboxRow.envelope).sorted { ($0.sequence ?? 0) < ($1.sequence ?? 0) }
        }
        for event in events { publisher.publish(event) }
        return events.count
    }
}
