import Bus
import Contracts
import Foundation
import Postgres
import ServiceKit

/// The user's standing with the terms, as the gateway's enforcement reads it
/// (`accounts.terms_standing`), and the decline that changes it.
extension AccountsStore {
    /// Stores that the user's last word on the terms is a decline of `version`: the standing,
    /// the act in the consent stream (with the client's address and agent) and the
    /// `accounts.terms_declined` event, in one transaction. A key used before writes nothing
    /// again. Nil when there is no such user; else the decline's time and record id.
    public func declined(
        _ id: UUID, version: String, key: String, clientIP: String?, userAgent: String?, outbox: Outbox
    ) async throws -> (at: Date, recordId: UUID)? {
        let (users, schema) = (self.users, self.schema)
        let recordId = UUID.timeOrdered()
        return try await pool.withTransaction { db in
            guard try !db.query("SELECT 1 FROM \(users) WHERE id = $1 FOR UPDATE", id).isEmpty else { return nil }
            let repeated = try db.query(
                """
                INSERT INTO \(schema).consent_keys (user_id, key, version, recorded_ms)
                VALUES ($1, $2, $3, (extract(epoch FROM date_trunc('milliseconds', now())) * 1000)::bigint)
                ON CONFLICT (user_id, key) DO NOTHING RETURNING 1
                """, id, key, version
            ).isEmpty
            let at =
                repeated
                ? Date()
                : try Self.streamAct(
                    .decline, user: id, version: version, key: key, recordId: recordId, clientIP: clientIP, userAgent: userAgent,
                    schema: schema, on: db)
            try db.execute("UPDATE \(users) SET tos_declined_at = $2 WHERE id = $1", id, at)
            try outbox.append(type: TermsEvents.declined, TermsDeclined(userId: id, declinedAt: at), on: db)
            return (at, recordId)
        }
    }

    /// The version the user's last word accepted (nil: never accepted, not recorded yet, or last
    /// declined) and the outbox sequence read first: every event numbered at or below it had
    /// committed before the user was read. Nil when there is no such user.
    public func termsStanding(_ id: UUID) async throws -> (sequence: Int64, acceptedVersion: String?)? {
        let (outbox, users) = (self.outbox, self.users)
        return try await pool.withConnection { db in
            let sequence = try db.query("SELECT coalesce(max(sequence), 0) FROM \(outbox)")[0].decode(Int64.self, column: 0)
            let sql = """
                SELECT CASE WHEN tos_accepted_at IS NOT NULL AND tos_declined_at IS NULL THEN tos_version END
                FROM \(users) WHERE id = $1
                """
            guard let row = try db.query(sql, id).first else { return nil }
            return (sequence, try row.decode(String?.self, column: 0))
        }
    }
}
