import Postgres

/// One publisher's row in a consumer's `event_cursors` table: the last sequence applied from it.
/// The table's SQL lives here, so every step of the consumer (reading its position, applying a
/// batch, parking a dead letter) agrees on it. Audit's consent follower keeps a cursor of its own
/// shape (with the transaction and entry within it), in `ConsentPage`.
struct EventCursor: Sendable {
    /// A name checked by ``OutboxSchema/validated(_:)``: it goes into the SQL text.
    let schema: String
    let publisher: String

    init(schema: String, publisher: String) {
        self.schema = OutboxSchema.validated(schema)
        self.publisher = publisher
    }

    /// The last sequence applied; 0 before the first.
    func read(_ db: isolated PostgresConnection) throws -> Int64 {
        let rows = try db.query("SELECT last_sequence FROM \(schema).event_cursors WHERE publisher = $1", publisher)
        return rows.isEmpty ? 0 : try rows[0].decode(Int64.self, column: 0)
    }

    /// The last sequence applied, with the row locked until the transaction ends (made at 0 the
    /// first time): two instances of a consumer then take turns, and an event is applied once.
    func lock(_ db: isolated PostgresConnection) throws -> Int64 {
        try db.execute(
            "INSERT INTO \(schema).event_cursors (publisher, last_sequence) VALUES ($1, 0) ON CONFLICT (publisher) DO NOTHING",
            publisher)
        return try db.query("SELECT last_sequence FROM \(schema).event_cursors WHERE publisher = $1 FOR UPDATE", publisher)[0]
            .decode(Int64.self, column: 0)
    }

    /// Moves the cursor to `sequence`, inside the transaction that ``lock(_:)`` began.
    func advance(_ db: isolated PostgresConnection, to sequence: Int64) throws {
        try db.execute(
            "UPDATE \(schema).event_cursors SET last_sequence = $2, updated_at = now() WHERE publisher = $1", publisher, sequence)
    }
}
