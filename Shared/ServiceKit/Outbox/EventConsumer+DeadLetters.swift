import Bus
import Contracts
import Foundation
import Postgres

extension EventConsumer {
    static let letterColumns = "publisher, sequence, type, error, attempts, parked_at, retried_at"

    static func letter(_ row: PostgresRow) throws -> DeadLetters.Letter {
        let (publisher, sequence, type, error, attempts, parkedAt, retriedAt) =
            try row.decode(String.self, Int64.self, String.self, String.self, Int.self, Date.self, Date?.self)
        return DeadLetters.Letter(
            publisher: publisher, sequence: sequence, type: type, error: error, attempts: attempts, parkedAt: parkedAt,
            retriedAt: retriedAt)
    }

    /// The dead letters in `schema` (of every publisher), oldest first.
    public static func deadLetters(in schema: String, pool: PostgresPool, includeRetried: Bool) async throws -> [DeadLetters.Letter] {
        let schema = OutboxSchema.validated(schema)
        return try await pool.withConnection { db in
            try db.query(
                "SELECT \(letterColumns) FROM \(schema).dead_letters WHERE $1 OR retried_at IS NULL ORDER BY parked_at, publisher, sequence",
                includeRetried
            ).map(letter)
        }
    }

    /// Applies parked event `sequence` now, with this consumer's handler, and marks its letter
    /// retried in the same transaction. When the handler throws again nothing is applied, the
    /// letter keeps the new error (one more attempt) and the error is thrown.
    public func retryDeadLetter(sequence: Int64) async throws -> DeadLetters.Letter {
        let (schema, publisher, apply) = (self.schema, self.publisher, self.apply)
        do {
            return try await pool.withTransaction { db in
                let rows = try db.query(
                    "SELECT envelope, retried_at FROM \(schema).dead_letters WHERE publisher = $1 AND sequence = $2 FOR UPDATE",
                    publisher, sequence)
                guard let row = rows.first else { throw BusError(.notFound, "no dead letter \(publisher) #\(sequence)") }
                let (bytes, retriedAt) = try row.decode(Data.self, Date?.self)
                guard retriedAt == nil else { throw BusError(.conflict, "dead letter \(publisher) #\(sequence) was already retried") }
                do { try apply(try EnvelopeCodec.decode(bytes), db) } catch { throw HandlerFailure(sequence: sequence, underlying: error) }
                return try Self.letter(
                    db.query(
                        """
                        UPDATE \(schema).dead_letters SET retried_at = now(), attempts = attempts + 1
                        WHERE publisher = $1 AND sequence = $2 RETURNING \(Self.letterColumns)
                        """, publisher, sequence)[0])
            }
        } catch let failure as HandlerFailure {
            let message = String(String(describing: failure.underlying).prefix(2000))
            try await pool.withConnection { db in
                try db.execute(
                    "UPDATE \(schema).dead_letters SET error = $3, attempts = attempts + 1 WHERE publisher = $1 AND sequence = $2",
                    publisher, sequence, message)
            }
            throw BusError(.conflict, "dead letter \(publisher) #\(sequence) failed again: \(message)")
        }
    }
}
