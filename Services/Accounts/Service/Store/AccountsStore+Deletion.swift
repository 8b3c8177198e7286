import Bus
import Contracts
import Foundation
import Hex
import Postgres
import ServiceKit

/// A pending deletion as stored.
/// What a deletion did: when, whether this call did it (false: a repeat), and its certificate.
public struct DeletionOutcome: Sendable {
    public var deletedAt: Date
    public var created: Bool
    public var certificate: DeletionCertificate?
}

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

    /// Deletes the user (eligibility confirmations, sessions and the request go with it), queues
    /// the revocation of the stored Apple token, writes the tombstone, the certificate and the
    /// `account.deleted` event, in one transaction. A request already carried out returns its
    /// tombstone and certificate; an unknown one is `not_found`, an expired one `gone`.
    public func confirmDeletion(
        _ id: UUID, request: UUID, documents: DocumentsUsage.Reply?, certifier: DeletionCertifier, outbox: Outbox
    ) async throws -> DeletionOutcome {
        let (requests, tombstones, certificates) = (deletionRequests, deletedAccounts, deletionCertificates)
        let names = self
        return try await pool.withTransaction { db in
            let done = try db.query(
                """
                SELECT t.deleted_at, c.token FROM \(tombstones) t LEFT JOIN \(certificates) c ON c.user_id = t.user_id
                WHERE t.user_id = $1 AND t.request_id = $2
                """, id, request
            ).first
            if let done {
                let (at, token) = try done.decode(Date.self, String?.self)
                return DeletionOutcome(deletedAt: at, created: false, certificate: try token.map(DeletionCertifier.decode))
            }
            let pending = try db.query(
                "SELECT expires_at <= now(), requested_at FROM \(requests) WHERE id = $1 AND user_id = $2 FOR UPDATE", request, id
            ).first
            guard let pending else { throw BusError(.notFound, "no pending deletion \(request.uuidString.lowercased()) for this user") }
            let (expired, requestedAt) = try pending.decode(Bool.self, Date.self)
            guard !expired else { throw BusError(.gone, "the deletion request has expired; request it again") }
            return try Self.delete(
                id, request: request, requestedAt: requestedAt, trigger: .inApp, documents: documents, names: names,
                certifier: certifier, outbox: outbox, on: db)
        }
    }

    /// The deletion itself, inside the caller's transaction: shared by a confirmed request and
    /// Apple's `account-delete`. `inApp` queues the Apple token for revocation; after Apple's own
    /// account deletion there is nothing to revoke, so the token is dropped.
    static func delete(
        _ id: UUID, request: UUID, requestedAt: Date, trigger: DeletionTrigger, documents: DocumentsUsage.Reply?,
        names: AccountsStore, certifier: DeletionCertifier, outbox: Outbox, on db: isolated PostgresConnection
    ) throws -> DeletionOutcome {
        guard let appleId = try db.query("SELECT apple_id FROM \(names.users) WHERE id = $1 FOR UPDATE", id).first?.decode(String.self, column: 0)
        else { throw BusError(.notFound, "no user \(id.uuidString.lowercased())") }
        let confirmations = try db.query("SELECT count(*)::bigint FROM \(names.confirmations) WHERE user_id = $1", id)[0].decode(Int.self, column: 0)
        let sessions = try db.query("SELECT count(*)::bigint FROM \(names.sessions) WHERE user_id = $1", id)[0].decode(Int.self, column: 0)
        let queued: [UUID] =
            switch trigger {
            case .inApp:
                try db.query("UPDATE \(names.appleTokens) SET apple_id = NULL, revoke_due_at = now() WHERE apple_id = $1 RETURNING id", appleId)
                    .map { try $0.decode(UUID.self, column: 0) }
            case .appleAccountDelete:
                try db.query("DELETE FROM \(names.appleTokens) WHERE apple_id = $1 RETURNING id", appleId).map { try $0.decode(UUID.self, column: 0) }
            }
        let deletedAt = try db.query(
            "INSERT INTO \(names.deletedAccounts) (user_id, request_id, deleted_at) VALUES ($1, $2, date_trunc('milliseconds', now())) RETURNING deleted_at",
            id, request)[0].decode(Date.self, column: 0)
        try db.execute("DELETE FROM \(names.users) WHERE id = $1", id)
        try streamDeletion(of: id, schema: names.schema, on: db)
        try outbox.append(type: AccountsEvents.deleted, AccountDeleted(userId: id, deletedAt: deletedAt), on: db)
        let certificate = try certifier.certify(
            DeletionFacts(
                userId: id, trigger: trigger, requestedAt: requestedAt, deletedAt: deletedAt, confirmations: confirmations,
                sessions: sessions, appleTokens: queued.count, documents: documents))
        if trigger == .inApp {
            for token in queued {
                try db.execute("UPDATE \(names.appleTokens) SET certificate_id = $2 WHERE id = $1", token, certificate.certificateId)
            }
        }
        try db.execute(
            "INSERT INTO \(names.deletionCertificates) (id, user_id, token) VALUES ($1, $2, $3)",
            certificate.certificateId, id, certificate.token)
        return DeletionOutcome(deletedAt: deletedAt, created: true, certificate: certificate)
    }

    /// A certificate by id.
    public func certificate(id: UUID) async throws -> DeletionCertificate? {
        let sql = "SELECT token FROM \(deletionCertificates) WHERE id = $1"
        let token = try await pool.withConnection { db in try db.query(sql, id).first?.decode(String.self, column: 0) }
        return try token.map(DeletionCertifier.decode)
    }

    /// The error for a user id with no row: `gone` when the account was deleted, else `not_found`.
    public func missing(_ id: UUID) async throws -> BusError {
        let sql = "SELECT 1 FROM \(deletedAccounts) WHERE user_id = $1"
        let deleted = try await pool.withConnection { db in try !db.query(sql, id).isEmpty }
        return Self.missing(id, deleted: deleted)
    }

    private static func missing(_ id: UUID, deleted: Bool) -> BusError {
        deleted ? BusError(.gone, "the account was deleted") : AccountsHandlers.unknown(id)
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
