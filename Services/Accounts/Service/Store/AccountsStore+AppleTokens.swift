import Bus
import Contracts
import Foundation
import Postgres

/// A stored Apple refresh token due for revocation.
public struct DueRevocation: Sendable {
    public var id: UUID
    public var sealedToken: String
    /// Attempts made before this one.
    public var attempts: Int
    /// The certificate of the deletion that queued it.
    public var certificateId: UUID?
}

/// The SQL over `apple_tokens`: Apple refresh tokens sealed at rest (the ciphertext only).
extension AccountsStore {
    /// Stores (or replaces) the sealed refresh token of `appleId`; `seal` gets the row id, the
    /// context the token is sealed under.
    public func storeAppleToken(appleId: String, seal: @Sendable (UUID) throws -> String) async throws {
        let id = UUID()
        let sealed = try seal(id)
        let sql = """
            INSERT INTO \(appleTokens) (id, apple_id, sealed_refresh_token) VALUES ($1, $2, $3)
            ON CONFLICT (apple_id) DO UPDATE SET id = excluded.id, sealed_refresh_token = excluded.sealed_refresh_token, stored_at = now()
            """
        _ = try await pool.withConnection { db in try db.execute(sql, id, appleId, sealed) }
    }

    /// Claims up to `limit` due revocations: each is pushed `lease` seconds ahead, so another
    /// instance (or the next sweep, after a crash) does not try it at the same time.
    public func claimRevocations(limit: Int, leaseSeconds: Int) async throws -> [DueRevocation] {
        let sql = """
            UPDATE \(appleTokens) SET revoke_due_at = now() + $2::bigint * interval '1 second'
            WHERE id IN (
                SELECT id FROM \(appleTokens) WHERE revoke_due_at IS NOT NULL AND revoke_due_at <= now()
                ORDER BY revoke_due_at LIMIT $1 FOR UPDATE SKIP LOCKED)
            RETURNING id, sealed_refresh_token, revoke_attempts, certificate_id
            """
        return try await pool.withConnection { db in
            try db.query(sql, limit, leaseSeconds).map { row in
                let (id, sealed, attempts, certificate) = try row.decode(UUID.self, String.self, Int.self, UUID?.self)
                return DueRevocation(id: id, sealedToken: sealed, attempts: attempts, certificateId: certificate)
            }
        }
    }

    /// Removes a token row (revoked at Apple, or given up) and, in the same transaction,
    /// re-signs the certificate of the deletion that queued it with what became of the grant.
    public func settleRevocation(_ due: DueRevocation, grant: AppleGrantRevocation, certifier: DeletionCertifier) async throws {
        let (tokens, certificates) = (appleTokens, deletionCertificates)
        try await pool.withTransaction { db in
            try db.execute("DELETE FROM \(tokens) WHERE id = $1", due.id)
            guard let certificateId = due.certificateId,
                let token = try db.query("SELECT token FROM \(certificates) WHERE id = $1 FOR UPDATE", certificateId).first?.decode(
                    String.self, column: 0)
            else { return }
            let amended = try certifier.amend(try DeletionCertifier.decode(token), appleGrant: grant)
            try db.execute("UPDATE \(certificates) SET token = $2 WHERE id = $1", certificateId, amended.token)
        }
    }

    /// Records a failed attempt and when to try next.
    public func revocationFailed(_ id: UUID, attempts: Int, retryAfterMilliseconds: Int64) async throws {
        let sql = """
            UPDATE \(appleTokens) SET revoke_attempts = $2, revoke_due_at = now() + $3::bigint * interval '1 millisecond' WHERE id = $1
            """
        _ = try await pool.withConnection { db in try db.execute(sql, id, attempts, retryAfterMilliseconds) }
    }

    /// Up to `limit` stored tokens whose seal names a key other than `keyID`, in id order after
    /// `after`: a page of what a rotation of the seal key leaves to reseal.
    public func tokensSealed(withKeyOtherThan keyID: String, after: UUID, limit: Int) async throws -> [(id: UUID, sealed: String)] {
        // The envelope is `v1.<key id>.<data>`: its second field names the key.
        let sql = """
            SELECT id, sealed_refresh_token FROM \(appleTokens)
            WHERE split_part(sealed_refresh_token, '.', 2) <> $1 AND id > $2 ORDER BY id LIMIT $3
            """
        return try await pool.withConnection { db in
            try db.query(sql, keyID, after, limit).map { row in
                let (id, sealed) = try row.decode(UUID.self, String.self)
                return (id, sealed)
            }
        }
    }

    /// Replaces a token's seal, unless the row changed since it was read (a new sign-in stored
    /// another token, or a revocation removed it): then the newer row stands. Whether it replaced.
    public func reseal(_ id: UUID, from old: String, to new: String) async throws -> Bool {
        let sql = "UPDATE \(appleTokens) SET sealed_refresh_token = $3 WHERE id = $1 AND sealed_refresh_token = $2"
        return try await pool.withConnection { db in try db.execute(sql, id, old, new) } == 1
    }
}
