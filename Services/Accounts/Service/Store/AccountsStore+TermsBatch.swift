import Bus
import Contracts
import Foundation
import Hex
import Postgres

/// The SQL of `accounts.accept_terms_batch`: one statement reads a batch's users, one stores
/// every acceptance of it, whatever its size. Both are prepared once per connection (every batch
/// runs them; parsing them each time was a visible part of PostgreSQL's CPU), and their text is
/// made once per store (``TermsBatchStatements``): building it per batch was 5% of Accounts' CPU
/// under `deploy/bench-gateway`.
extension AccountsStore {
    /// The users with these ids that exist, by id.
    public func users(ids: [UUID]) async throws -> [UUID: StoredUser] {
        let list = PostgresArrayLiteral.of(ids.map { Hex.uuid($0) })
        return try await pool.withConnection { [sql = termsBatch.usersByIDs] db in
            var found: [UUID: StoredUser] = [:]
            for row in try db.query(sql, list) {
                let user = try StoredUser.decode(row)
                found[user.id] = user
            }
            return found
        }
    }

    /// Stores each acceptance (the version and the instant Audit recorded) on its user, in one
    /// statement; the users as they now are, by id. A user twice in `acceptances` is updated once,
    /// with one of its acceptances (both name the version in effect).
    ///
    /// The rows are locked in id order before any is updated: concurrent batches list the same
    /// users in different orders, and rows locked in the order the plan meets them let two batches
    /// wait on each other (a deadlock, or `lock_timeout` first). Every lock taken in one global
    /// order cannot form a cycle.
    public func accepted(_ acceptances: [(user: UUID, version: String, at: Date)]) async throws -> [UUID: StoredUser] {
        let ids = PostgresArrayLiteral.of(acceptances.map { Hex.uuid($0.user) })
        let versions = PostgresArrayLiteral.of(acceptances.map(\.version))
        let times = PostgresArrayLiteral.of(acceptances.map { String($0.at.millisecondsSince1970) })
        return try await pool.withConnection { [sql = termsBatch.accepted] db in
            var stored: [UUID: StoredUser] = [:]
            for row in try db.query(sql, ids, versions, times) {
                let user = try StoredUser.decode(row)
                stored[user.id] = user
            }
            return stored
        }
    }
}

/// The statements of ``AccountsStore/users(ids:)`` and ``AccountsStore/accepted(_:)`` for one
/// schema's `users` table.
struct TermsBatchStatements: Sendable {
    let usersByIDs: PostgresStatement
    let accepted: PostgresStatement

    init(users: String) {
        usersByIDs = PostgresStatement(name: "\(users)_by_ids", sql: "SELECT \(StoredUser.columns) FROM \(users) WHERE id = ANY($1::uuid[])")
        accepted = PostgresStatement(
            name: "\(users)_accepted_batch",
            sql: """
                WITH a AS (SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[]) AS a(id, version, ms)),
                locked AS MATERIALIZED (SELECT id FROM \(users) WHERE id IN (SELECT id FROM a) ORDER BY id FOR UPDATE)
                UPDATE \(users) AS u SET tos_version = a.version,
                    tos_accepted_at = timestamptz 'epoch' + a.ms * interval '1 millisecond', tos_declined_at = NULL
                FROM a, locked
                WHERE u.id = a.id AND u.id = locked.id
                RETURNING \(StoredUser.columns(of: "u"))
                """)
    }
}
