import Bus
import Foundation
import Postgres

/// An outbox row as the event envelope it is published as, for the relay and `events.since` alike.
enum OutboxRow {
    /// Selects, in this order, what ``envelope(_:)`` reads.
    static let columns = "sequence, type, payload, created_at"

    static func envelope(_ row: PostgresRow) throws -> Envelope {
        let (sequence, type, payload, created) = try row.decode(Int64.self, String.self, PostgresJSONB.self, Date.self)
        return Envelope(kind: .event, type: type, sentAt: created, sequence: sequence, payload: Data(payload.bytes))
    }
}
