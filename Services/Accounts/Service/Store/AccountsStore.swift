import Bus
import Foundation
import Postgres

/// The SQL of the Accounts service over `users` and `eligibility_confirmations`; deletion in
/// `AccountsStore+Deletion.swift`, sessions in `AccountsStore+Sessions.swift`, corrections and the
/// export in `AccountsStore+Profile.swift`. The schema is
/// spliced in after validation (qualified names cannot be parameters); every value is a parameter.
public struct AccountsStore: Sendable {
    public let pool: PostgresPool
    let schema: String
    let users: String
    let confirmations: String
    let deletionRequests: String
    let deletedAccounts: String
    let sessions: String
    /// Refresh tokens sessions rotated away from, to recognise a reuse.
    let retiredRefreshTokens: String
    let appleTokens: String
    let appleNotifications: String
    let deletionCertificates: String
    let profileCorrections: String
    /// ServiceKit's outbox table of this schema (read for the sequence revocations are complete up to).
    let outbox: String
    /// The prepared statements every acceptance batch runs.
    let termsBatch: TermsBatchStatements
    /// The consent stream's table and statements (`AccountsStore+ConsentStream.swift`).
    let consentStream: ConsentStreamStatements

    public init(pool: PostgresPool, schema: String = AccountsServiceDescription.name) {
        precondition(
            schema.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) } && !schema.isEmpty,
            "invalid schema name \(schema)")
        self.pool = pool
        self.schema = schema
        self.users = "\(schema).users"
        self.confirmations = "\(schema).eligibility_confirmations"
        self.deletionRequests = "\(schema).deletion_requests"
        self.deletedAccounts = "\(schema).deleted_accounts"
        self.sessions = "\(schema).sessions"
        self.retiredRefreshTokens = "\(schema).retired_refresh_tokens"
        self.appleTokens = "\(schema).apple_tokens"
        self.appleNotifications = "\(schema).apple_notifications"
        self.deletionCertificates = "\(schema).deletion_certificates"
        self.profileCorrections = "\(schema).profile_corrections"
        self.outbox = "\(schema).outbox"
        self.termsBatch = TermsBatchStatements(schema: schema)
        self.consentStream = ConsentStreamStatements(schema: schema)
    }

    public func user(appleId: String) async throws -> StoredUser? {
        let sql = "SELECT \(StoredUser.columns) FROM \(users) WHERE apple_id = $1"
        return try await pool.withConnection { db in try db.query(sql, appleId).first.map(StoredUser.decode) }
    }

    public func user(id: UUID) async throws -> StoredUser? {
        let sql = "SELECT \(StoredUser.columns) FROM \(users) WHERE id = $1"
        return try await pool.withConnection { db in try db.query(sql, id).first.map(StoredUser.decode) }
    }

    /// Fills a blank email or name (seed 004: an existing user is otherwise returned unchanged).
    public func fillBlanks(_ id: UUID, email: String?, name: String?) async throws -> StoredUser? {
        let sql = """
            UPDATE \(users) SET email = coalesce(nullif(email, ''), $2), name = coalesce(nullif(name, ''), $3)
            WHERE id = $1 RETURNING \(StoredUser.columns)
            """
        return try await pool.withConnection { db in try db.query(sql, id, email, name).first.map(StoredUser.decode) }
    }

    /// Stores `new` with its eligibility confirmation, and its acceptance of the terms (when
    /// `new.tosVersion` is set) in the consent stream, in one transaction. When the Apple id is
    /// already taken (a concurrent sign-up won), returns that user and `created` false.
    public func insert(_ new: NewUser) async throws -> (user: StoredUser, created: Bool) {
        let (users, confirmations, sessions, schema) = (self.users, self.confirmations, self.sessions, self.schema)
        let fresh = UUID()
        let recordId = UUID.timeOrdered()
        return try await pool.withTransaction { db in
            // The id a sign-in already gave out for this Apple id (Supabase Auth clients hold it), else a new one.
            let reserved = try db.query(AccountsStore.reservedAccountIdSQL(sessions, appleId: "$1"), new.appleId).first
            let id = try reserved?.decode(UUID.self, column: 0) ?? fresh
            let insert = """
                INSERT INTO \(users) (id, apple_id, email, name, state, eligibility_confirmed_at, eligibility_rules_version, tos_version)
                VALUES ($1, $2, $3, $4, $5, date_trunc('milliseconds', now()), $6, $7)
                ON CONFLICT (apple_id) DO NOTHING RETURNING \(StoredUser.columns)
                """
            guard let row = try db.query(insert, id, new.appleId, new.email, new.name, new.state, new.rulesVersion, new.tosVersion).first
            else {
                guard let raced = try db.query("SELECT \(StoredUser.columns) FROM \(users) WHERE apple_id = $1", new.appleId).first else {
                    throw BusError(.unavailable, "a concurrent sign-up of this Apple id rolled back; try again")
                }
                return (try StoredUser.decode(raced), false)
            }
            let user = try StoredUser.decode(row)
            // Sessions opened before the account existed now belong to it (and go when it is deleted).
            try db.execute("UPDATE \(sessions) SET user_id = $1 WHERE apple_id = $2 AND user_id IS NULL", user.id, new.appleId)
            try db.execute(
                """
                INSERT INTO \(confirmations) (user_id, state, rules_version, minimum_age, confirmed_at, client_ip, user_agent)
                VALUES ($1, $2, $3, $4, $5, $6, $7)
                """, user.id, new.state, new.rulesVersion, new.minimumAge, user.eligibilityConfirmedAt, new.clientIP, new.userAgent)
            guard let version = new.tosVersion else { return (user, true) }
            return (try Self.signupStreamed(user, version: version, recordId: recordId, new.clientIP, new.userAgent, schema: schema, on: db), true)
        }
    }

    /// The sign-up acceptance of a user stored without it having been recorded (by the two-writer
    /// path, before the consent stream, when Audit did not answer): written to the stream now,
    /// once (the row is locked, and `signup_receipt_id` says it is done).
    public func streamSignup(_ id: UUID, clientIP: String?, userAgent: String?) async throws -> StoredUser? {
        let (users, schema) = (self.users, self.schema)
        let recordId = UUID.timeOrdered()
        return try await pool.withTransaction { db in
            guard let row = try db.query("SELECT \(StoredUser.columns) FROM \(users) WHERE id = $1 FOR UPDATE", id).first else { return nil }
            let user = try StoredUser.decode(row)
            guard user.signupReceiptId == nil, let version = user.tosVersion else { return user }
            return try Self.signupStreamed(user, version: version, recordId: recordId, clientIP, userAgent, schema: schema, on: db)
        }
    }

    /// Streams `user`'s sign-up acceptance and marks it recorded (the record's id and time).
    private static func signupStreamed(
        _ user: StoredUser, version: String, recordId: UUID, _ clientIP: String?, _ userAgent: String?, schema: String,
        on db: isolated PostgresConnection
    ) throws -> StoredUser {
        let at = try streamAct(
            .accept, user: user.id, version: version, key: "accounts.signup:\(user.id.uuidString.lowercased())", recordId: recordId,
            clientIP: clientIP, userAgent: userAgent, schema: schema, on: db)
        let sql = """
            UPDATE \(schema).users SET signup_receipt_id = $2, tos_accepted_at = coalesce(tos_accepted_at, $3)
            WHERE id = $1 RETURNING \(StoredUser.columns)
            """
        return try db.query(sql, user.id, recordId, at).first.map(StoredUser.decode) ?? user
    }

    /// Users with this id, Apple id or email (without regard to case): whichever is given; oldest first.
    public func find(userId: UUID?, appleId: String?, email: String?, limit: Int) async throws -> [StoredUser] {
        let sql = """
            SELECT \(StoredUser.columns) FROM \(users)
            WHERE ($1::uuid IS NOT NULL AND id = $1::uuid) OR ($2::text IS NOT NULL AND apple_id = $2::text)
                OR ($3::text IS NOT NULL AND lower(email) = lower($3::text))
            ORDER BY created_at, id LIMIT $4
            """
        return try await pool.withConnection { db in try db.query(sql, userId, appleId, email, limit).map(StoredUser.decode) }
    }

    /// Users whose state is one of `states`, in id order after `after`.
    public func users(inStates states: [String], after: UUID?, limit: Int) async throws -> [StoredUser] {
        let sql = """
            SELECT \(StoredUser.columns) FROM \(users)
            WHERE state = ANY (string_to_array($1, ',')) AND ($2::uuid IS NULL OR id > $2::uuid)
            ORDER BY id LIMIT $3
            """
        let list = states.joined(separator: ",")
        return try await pool.withConnection { db in try db.query(sql, list, after, limit).map(StoredUser.decode) }
    }
}
