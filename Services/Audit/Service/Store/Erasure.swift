import Bus
import Contracts
import Foundation
import Postgres

/// Erasure of a subject (a user's data request, or account deletion): the user's link to their
/// records goes — the subject row with its HMAC secret, and the raw IP, user agent and
/// idempotency hash of every record — while the records, their digests, times and hashes stay,
/// so every chain still verifies and the proof that *someone* consented remains.
///
/// The erased user's subject also leaves this instance's ``SubjectCache`` (other instances' entries
/// expire; none of them can write a record with it, see ``BatchWriter``).
struct Erasure: Sendable {
    let pool: PostgresPool
    let subjects: SubjectCache

    /// Returns how many records lost their personal data; 0 for an unknown or already erased user.
    func erase(_ user: UUID) async throws -> Int {
        defer { subjects.forget(user) }
        return try await pool.withTransaction { db in try Self.erase(user, on: db) }
    }

    /// The same inside the caller's transaction (the `account.deleted` consumer's). The runtime
    /// role may not update or delete records or subjects: `audit.erase_subject` (migration 0120),
    /// which runs as the schema's owner, is the one statement that may, and it changes only what
    /// an erasure must.
    private static func erase(_ user: UUID, on db: isolated PostgresConnection) throws -> Int {
        try db.query("SELECT audit.erase_subject($1)", user)[0].decode(Int.self, column: 0)
    }

    /// Applies one `account.deleted` event (Accounts' outbox; caught up after downtime), exactly
    /// once with the consumer's cursor. Accounts also calls `audit.erase_subject` directly; both
    /// paths are idempotent, so whichever comes second erases nothing more.
    func apply(_ envelope: Envelope, on db: isolated PostgresConnection) throws {
        guard envelope.type == AccountsEvents.deleted else { return }
        let user = try envelope.decodePayload(AccountDeleted.self).userId
        defer { subjects.forget(user) }
        _ = try Self.erase(user, on: db)
    }
}
