import Bus
import Contracts
import Foundation
import Postgres
import ServiceKit

/// A session row: whom it speaks for and whether it is still open.
public struct StoredSession: Sendable, Equatable {
    public var id: UUID
    /// Nil while the Apple id has no account.
    public var userId: UUID?
    public var appleId: String
    public var expiresAt: Date
    public var revokedAt: Date?
    /// The id the Apple id's account will get when created (nil for sessions opened before ids
    /// were given out at sign-in); see ``accountID``.
    public var reservedAccountId: UUID?

    static let columns = "id, user_id, apple_id, expires_at, revoked_at, account_id"

    static func decode(_ row: PostgresRow) throws -> StoredSession {
        let (id, userId, appleId, expiresAt, revokedAt, reserved) = try row.decode(
            UUID.self, UUID?.self, String.self, Date.self, Date?.self, UUID?.self)
        return StoredSession(id: id, userId: userId, appleId: appleId, expiresAt: expiresAt, revokedAt: revokedAt, reservedAccountId: reserved)
    }

    /// The account's id, or the one it will get: what a Supabase Auth client knows the user by.
    public var accountID: UUID? { userId ?? reservedAccountId }

    /// Neither revoked nor past its end.
    public func isOpen(at now: Date = Date()) -> Bool { revokedAt == nil && expiresAt > now }
}

/// The SQL over `sessions`. Refresh tokens are stored only as their SHA-256 hex.
extension AccountsStore {
    /// Opens a session for `appleId`, bound to its user if one exists by the time of the insert.
    /// Without a user, the session carries the id the account will get: the one an open session
    /// of the Apple id already holds, else a new one.
    public func openSession(appleId: String, refreshHash: String, lifetimeSeconds: Int) async throws -> StoredSession {
        let sql = """
            WITH account AS (SELECT id FROM \(users) WHERE apple_id = $2)
            INSERT INTO \(sessions) (id, user_id, apple_id, refresh_token_hash, expires_at, account_id)
            VALUES ($1, (SELECT id FROM account), $2, $3, now() + $4::bigint * interval '1 second',
                    coalesce((SELECT id FROM account), (\(Self.reservedAccountIdSQL(sessions, appleId: "$2"))), $5))
            RETURNING \(StoredSession.columns)
            """
        return try await pool.withConnection { db in
            try StoredSession.decode(db.query(sql, UUID(), appleId, refreshHash, lifetimeSeconds, UUID())[0])
        }
    }

    /// The account id an open session of an Apple id without an account holds (the earliest).
    static func reservedAccountIdSQL(_ sessions: String, appleId parameter: String) -> String {
        """
        SELECT account_id FROM \(sessions) WHERE apple_id = \(parameter) AND user_id IS NULL AND revoked_at IS NULL
            AND expires_at > now() AND account_id IS NOT NULL ORDER BY created_at LIMIT 1
        """
    }

    /// What presenting a refresh token came to.
    public enum Rotation: Sendable, Equatable {
        /// It was the session's live token: replaced by the new one, the session extended.
        case rotated(StoredSession)
        /// It was one the session had already rotated away from: someone holds a copy. The
        /// session (the whole family of tokens from that sign-in) is to be revoked.
        case reused(sessionId: UUID)
        /// Unknown, revoked or expired.
        case refused
    }

    /// Replaces an open session's refresh token (rotation) and extends it, remembering the old
    /// token's hash so a later use of it is told apart from an unknown token (see ``Rotation``).
    public func rotate(refreshHash old: String, to new: String, lifetimeSeconds: Int) async throws -> Rotation {
        let (sessions, retired) = (self.sessions, self.retiredRefreshTokens)
        return try await pool.withTransaction { db in
            let update = """
                UPDATE \(sessions) SET refresh_token_hash = $2, expires_at = now() + $3::bigint * interval '1 second'
                WHERE refresh_token_hash = $1 AND revoked_at IS NULL AND expires_at > now()
                RETURNING \(StoredSession.columns)
                """
            if let session = try db.query(update, old, new, lifetimeSeconds).first.map(StoredSession.decode) {
                try db.execute("INSERT INTO \(retired) (refresh_token_hash, session_id) VALUES ($1, $2)", old, session.id)
                try db.execute(
                    "DELETE FROM \(retired) WHERE session_id = $1 AND rotated_at < now() - $2::bigint * interval '1 second'",
                    session.id, lifetimeSeconds)
                return .rotated(session)
            }
            if let row = try db.query("SELECT session_id FROM \(retired) WHERE refresh_token_hash = $1", old).first {
                return .reused(sessionId: try row.decode(UUID.self, column: 0))
            }
            return .refused
        }
    }

    /// The session with this id, or with this refresh token hash.
    public func session(id: UUID) async throws -> StoredSession? {
        let sql = "SELECT \(StoredSession.columns) FROM \(sessions) WHERE id = $1"
        return try await pool.withConnection { db in try db.query(sql, id).first.map(StoredSession.decode) }
    }

    public func session(refreshHash: String) async throws -> StoredSession? {
        let sql = "SELECT \(StoredSession.columns) FROM \(sessions) WHERE refresh_token_hash = $1"
        return try await pool.withConnection { db in try db.query(sql, refreshHash).first.map(StoredSession.decode) }
    }

    /// Binds a session opened for an Apple id to the account created since, when the account's
    /// transaction did not see it (a sign-in racing the sign-up); the row as it now is.
    public func bindPending(_ session: StoredSession) async throws -> StoredSession {
        guard session.userId == nil else { return session }
        let sql = """
            UPDATE \(sessions) SET user_id = u.id FROM \(users) u
            WHERE \(sessions).id = $1 AND \(sessions).user_id IS NULL AND u.apple_id = \(sessions).apple_id
            RETURNING \(sessions).id, \(sessions).user_id, \(sessions).apple_id, \(sessions).expires_at, \(sessions).revoked_at, \(sessions).account_id
            """
        return try await pool.withConnection { db in try db.query(sql, session.id).first.map(StoredSession.decode) } ?? session
    }

    /// Revokes the session (a repeat keeps the first time) and, the first time, announces it
    /// (`session.revoked`) in the same transaction, so gateways that verify tokens themselves
    /// refuse the session's tokens too; the revoked row.
    public func revokeSession(_ id: UUID, outbox: Outbox) async throws -> StoredSession? {
        let sessions = self.sessions
        return try await pool.withTransaction { db in
            let lock = "SELECT revoked_at FROM \(sessions) WHERE id = $1 FOR UPDATE"
            guard let row = try db.query(lock, id).first else { return nil }
            let wasOpen = try row.decode(Date?.self, column: 0) == nil
            let sql = """
                UPDATE \(sessions) SET revoked_at = coalesce(revoked_at, date_trunc('milliseconds', now()))
                WHERE id = $1 RETURNING \(StoredSession.columns)
                """
            guard let revoked = try db.query(sql, id).first.map(StoredSession.decode) else { return nil }
            if wasOpen, let at = revoked.revokedAt {
                try outbox.append(type: SessionEvents.revoked, SessionRevoked(sessionId: id, userId: revoked.userId, revokedAt: at), on: db)
            }
            return revoked
        }
    }

    /// Ends every open session of `user` (bound to the account, or opened for its Apple id before
    /// the account existed); their refresh tokens stop working in the same statement. Each is
    /// announced (`session.revoked`) in the same transaction. Sessions opened later are not
    /// touched: signing in again works. The sessions ended.
    /// `except` stays open (a sign-out of the user's other sessions); a nil `user` (no account
    /// yet) ends the Apple id's sessions.
    public func revokeAllSessions(of user: UUID?, appleId: String, except: UUID? = nil, outbox: Outbox) async throws -> [SessionRevoked] {
        let sessions = self.sessions
        return try await pool.withTransaction { db in
            let sql = """
                UPDATE \(sessions) SET revoked_at = date_trunc('milliseconds', now())
                WHERE (user_id = $1 OR apple_id = $2) AND revoked_at IS NULL AND id IS DISTINCT FROM $3 RETURNING id, revoked_at
                """
            let ended = try db.query(sql, user, appleId, except).map { row in
                let (id, at) = try row.decode(UUID.self, Date.self)
                return SessionRevoked(sessionId: id, userId: user, revokedAt: at)
            }
            for session in ended { try outbox.append(type: SessionEvents.revoked, session, on: db) }
            return ended
        }
    }

    /// Every revocation since `since` and the outbox sequence the list is complete up to. The
    /// sequence is read first: an event numbered at or below it committed before the reads that
    /// follow, so its revocation is in them; anything later comes with a higher number.
    public func revocations(since: Date) async throws -> (sequence: Int64, sessions: [SessionRevoked], users: [UserSessionsRevoked]) {
        let (outbox, sessions, deletedAccounts) = (self.outbox, self.sessions, self.deletedAccounts)
        return try await pool.withConnection { db in
            let sequence = try db.query("SELECT coalesce(max(sequence), 0) FROM \(outbox)")[0].decode(Int64.self, column: 0)
            let revoked = try db.query("SELECT id, user_id, revoked_at FROM \(sessions) WHERE revoked_at > $1", since).map { row in
                let (id, user, at) = try row.decode(UUID.self, UUID?.self, Date.self)
                return SessionRevoked(sessionId: id, userId: user, revokedAt: at)
            }
            let deleted = try db.query("SELECT user_id, deleted_at FROM \(deletedAccounts) WHERE deleted_at > $1", since).map { row in
                let (user, at) = try row.decode(UUID.self, Date.self)
                return UserSessionsRevoked(userId: user, revokedAt: at)
            }
            return (sequence, revoked, deleted)
        }
    }

    /// How many sessions the user has (the deletion preview counts them).
    public func sessionCount(_ userId: UUID) async throws -> Int {
        let sql = "SELECT count(*)::bigint FROM \(sessions) WHERE user_id = $1"
        return try await pool.withConnection { db in try db.query(sql, userId)[0].decode(Int.self, column: 0) }
    }
}
