import Bus
import Contracts
import Foundation
import Postgres

/// Answers `<service>.events.since` from the outbox table: the catch-up path of every subscriber.
public enum EventsSinceHandler {
    /// The most events one reply carries; a subscriber asks again for the rest.
    public static let pageLimit = 1000

    public static func register(service: String, outbox: Outbox, pool: PostgresPool, on server: RPCServer) {
        let schema = outbox.schema
        server.registerRaw(EventsSince.type(for: service)) { envelope, _ in
            let request = try envelope.decodePayload(EventsSince.Request.self)
            guard request.after >= 0, request.limit > 0 else {
                throw BusError(.invalidArgument, "after must be ≥ 0 and limit > 0")
            }
            let limit = min(request.limit, pageLimit)
            let (events, latest): ([Envelope], Int64) = try await pool.withConnection { db in
                let rows = try db.query(
                    "SELECT \(OutboxRow.columns) FROM \(schema).outbox WHERE sequence > $1 ORDER BY sequence LIMIT $2",
                    request.after, limit)
                let events = try rows.map(OutboxRow.envelope)
                let latest = try db.query("SELECT coalesce(max(sequence), 0) FROM \(schema).outbox")[0].decode(Int64.self, column: 0)
                return (events, latest)
            }
            let reply = EventsSince.Reply(count: events.count, latestSequence: latest)
            return (try BusJSON.encode(reply), events.map(EnvelopeCodec.encode))
        }
    }
}
