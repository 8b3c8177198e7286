import Bus
import Contracts
import Foundation
import Postgres
import ServiceKit

/// A pending deletion as stored.
public struct PendingDeletion: Sendable, Equatable {
    public var requestId: UUID
    public var userId: UUID
    public var requestedAt: Date
    public var expiresAt: Date
}

extension AccountsStore {
    /// How many eligibility confirmations the user has (the preview counts them).
    public func confirmationCount(_ id: UUID) async throws -> Int {
        let sql = "SELECT count(*)::bigint FROM \(confirmations) WHERE user_id = $1"
        return try await pool.withConnection { db in try db.query(sql, id)[0].decode(Int.self, column: 0) }
    }

    /// Starts (or restarts) the user's pending deletion, valid for `lifetime` seconds.
    public func requestDeletion(_ id: UUID, lifetime: Int) async throws -> PendingDeletion {
        let sql = """
            INSERT INTO \(deletionRequests) (id, user_id, requested_at, expires_at)
            VALUES ($1, $2, date_trunc('milliseconds', now()), date_trunc('milliseconds', now()) + make_interval(secs => $3))
            ON CONFLICT (user_id) DO UPDATE SET id = excluded.id, requested_at = excluded.requested_at, expires_at = excluded.expires_at
            RETURNING id, user_id, requested_at, expires_at
            """
        return try await pool.withConnection { db in
            let (request, user, at, expires) = try db.query(sql, UUID(), id, Double(lifetime))[0].decode(UUID.self, UUID.self, Date.self, Date.self)
            return PendingDeletion(requestId: request, userId: user, requestedAt: at, expiresAt: expires)
        }
    }

    /// Drops the pending request; `false` when there is no such request for the user.
    public func cancelDeletion(_ id: UUID, request: UUID) async throws -> Bool {
        let sql = "DELETE FROM \(deletionRequests) WHERE id = $1 AND user_id = $2"
        return try await pool.withConnection { db in try db.execute(sql, request, id) == 1 }
    }

    /// Deletes the user (eligibility confirmations and the request go with it), writes the
    /// tombstone and the `account.deleted` event, in one transaction. A request already carried
    /// out returns its tombstone; an unknown one is `not_found`, an expired one `gone`.
    public func confirmDeletion(_ id: UUID, request: UUID, outbox: Outbox) async throws -> (deletedAt: Date, created: Bool) {
        let (users, requests, tombstones) = (self.users, deletionRequests, deletedAccounts)
        return try await pool.withTransaction { db in
            if let done = try db.query("SELECT deleted_at FROM \(tombstones) WHERE user_id = $1 AND request_id = $2", id, request).first {
                return (try done.decode(Date.self, column: 0), false)
            }
            let pending = try db.query(
                "SELECT expires_at <= now() FROM \(requests) WHERE id = $1 AND user_id = $2 FOR UPDATE", request, id).first
            guard let pending else { throw BusError(.notFound, "no pending deletion \(request.uuidString.lowercased()) for this user") }
            guard try !pending.decode(Bool.self, column: 0) else {
                throw BusError(.gone, "the deletion request has expired; request it again")
            }
            let deletedAt = try db.query(
                "INSERT INTO \(tombstones) (user_id, request_id, deleted_at) VALUES ($1, $2, date_trunc('milliseconds', now())) RETURNING deleted_at",
                id, request)[0].decode(Date.self, column: 0)
            try db.execute("DELETE FROM \(users) WHERE id = $1", id)
            try outbox.append(type: AccountsEvents.deleted, AccountDeleted(userId: id, deletedAt: deletedAt), on: db)
            return (deletedAt, true)
        }
    }

    /// The error for a user id with no row: `gone` when the account was deleted, else `not_found`.
    public func missing(_ id: UUID) async throws -> BusError {
        let sql = "SELECT 1 FROM \(deletedAccounts) WHERE user_id = $1"
        let deleted = try await pool.withConnection { db in try !db.query(sql, id).isEmpty }
        return deleted ? BusError(.gone, "the account was deleted") : AccountsHandlers.unknown(id)
    }

    /// Deleted accounts whose Audit erasure is still to do, oldest first.
    public func erasuresDue(limit: Int) async throws -> [UUID] {
        let sql = "SELECT user_id FROM \(deletedAccounts) WHERE audit_erased_at IS NULL ORDER BY deleted_at LIMIT $1"
        return try await pool.withConnection { db in try db.query(sql, limit).map { try $0.decode(UUID.self, column: 0) } }
    }

    public func erased(_ id: UUID) async throws {
        let sql = "UPDATE \(deletedAccounts) SET audit_erased_at = now() WHERE user_id = $1"
        _ = try await pool.withConnection { db in try db.execute(sql, id) }
    }
}
