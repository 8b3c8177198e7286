import Bus
import Contracts
import Foundation
import Postgres
import ServiceKit

/// The user's standing with the terms, as the gateway's enforcement reads it
/// (`accounts.terms_standing`), and the decline that changes it.
extension AccountsStore {
    /// Stores that the user's last word on the terms is a decline Audit recorded at `at`, with
    /// its `accounts.terms_declined` event in the same transaction.
    public func declined(_ id: UUID, at: Date, outbox: Outbox) async throws -> Bool {
        let sql = "UPDATE \(users) SET tos_declined_at = $2 WHERE id = $1"
        return try await pool.withTransaction { db in
            guard try db.execute(sql, id, at) == 1 else { return false }
            try outbox.append(type: TermsEvents.declined, TermsDeclined(userId: id, declinedAt: at), on: db)
            return true
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
