import Bus
import Contracts
import Foundation
import Postgres

/// A checked profile correction, ready to store: only the fields that change.
public struct ProfileChange: Sendable, Equatable {
    /// A state the rules in force allow, with those rules' version and minimum age.
    public struct State: Sendable, Equatable {
        public var code: String
        public var rulesVersion: String
        public var minimumAge: Int
    }
    public var name: String?
    public var email: String?
    public var state: State?
    public var clientIP: String?
    public var userAgent: String?

    /// The names of the changed fields, in a fixed order.
    public var fields: [String] {
        [name.map { _ in "name" }, email.map { _ in "email" }, state.map { _ in "state" }].compactMap { $0 }
    }
}

/// The SQL of profile corrections and of the Accounts part of a user's data export.
extension AccountsStore {
    /// Applies `change` to the user, records it in `profile_corrections` and, for a new state, adds
    /// an eligibility confirmation under the rules that allowed it; one transaction. Nil when
    /// there is no such user.
    public func correctProfile(_ id: UUID, _ change: ProfileChange) async throws -> StoredUser? {
        let (users, confirmations, corrections) = (self.users, self.confirmations, self.profileCorrections)
        return try await pool.withTransaction { db in
            let update = """
                UPDATE \(users) SET name = coalesce($2, name), email = coalesce($3, email), state = coalesce($4, state),
                    eligibility_rules_version = coalesce($5, eligibility_rules_version)
                WHERE id = $1 RETURNING \(StoredUser.columns)
                """
            guard let row = try db.query(update, id, change.name, change.email, change.state?.code, change.state?.rulesVersion).first else {
                return nil
            }
            let at = try db.query("SELECT date_trunc('milliseconds', clock_timestamp())")[0].decode(Date.self, column: 0)
            try db.execute(
                """
                INSERT INTO \(corrections) (id, user_id, corrected_at, fields, client_ip, user_agent)
                VALUES ($1, $2, $3, $4::text[], $5, $6)
                """, UUID(), id, at, PostgresArrayLiteral.of(change.fields), change.clientIP, change.userAgent)
            if let state = change.state {
                try db.execute(
                    """
                    INSERT INTO \(confirmations) (user_id, state, rules_version, minimum_age, confirmed_at, client_ip, user_agent)
                    VALUES ($1, $2, $3, $4, $5, $6, $7)
                    """, id, state.code, state.rulesVersion, state.minimumAge, at, change.clientIP, change.userAgent)
            }
            return try StoredUser.decode(row)
        }
    }

    /// What the export shows beyond the user row, read in one snapshot.
    public struct ExportedRecords: Sendable, Equatable {
        public var confirmations: [EligibilityConfirmation]
        public var corrections: [ProfileCorrection]
        public var sessions: [SessionSummary]
        public var appleRefreshTokenHeld: Bool
        public var appleEmailDisabled: Bool
    }

    /// The user's eligibility confirmations and corrections (oldest first), sessions (newest
    /// first, metadata only) and Apple flags. Nil when there is no such user.
    public func exportedRecords(of user: StoredUser) async throws -> ExportedRecords? {
        let (users, confirmations, sessions, appleTokens) = (self.users, self.confirmations, self.sessions, self.appleTokens)
        let corrections = self.profileCorrections
        return try await pool.withTransaction { db in
            try db.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            guard let flag = try db.query("SELECT apple_email_disabled FROM \(users) WHERE id = $1", user.id).first else { return nil }
            let confirmed = try db.query(
                """
                SELECT state, rules_version, minimum_age, confirmed_at, client_ip, user_agent FROM \(confirmations)
                WHERE user_id = $1 ORDER BY confirmed_at
                """, user.id
            ).map { row in
                let (state, rules, age, at, ip, agent) = try row.decode(String.self, String.self, Int.self, Date.self, String?.self, String?.self)
                return EligibilityConfirmation(state: state, rulesVersion: rules, minimumAge: age, confirmedAt: at, clientIP: ip, userAgent: agent)
            }
            let corrected = try db.query(
                """
                SELECT corrected_at, array_to_string(fields, ','), client_ip, user_agent FROM \(corrections)
                WHERE user_id = $1 ORDER BY corrected_at, id
                """, user.id
            ).map { row in
                let (at, fields, ip, agent) = try row.decode(Date.self, String.self, String?.self, String?.self)
                return ProfileCorrection(correctedAt: at, fields: fields.split(separator: ",").map(String.init), clientIP: ip, userAgent: agent)
            }
            // Sessions opened before the account existed are bound to it at sign-up, so user_id
            // covers them; the Apple id covers any still unbound.
            let opened = try db.query(
                """
                SELECT id, created_at, expires_at, revoked_at FROM \(sessions)
                WHERE user_id = $1 OR (user_id IS NULL AND apple_id = $2) ORDER BY created_at DESC, id
                """, user.id, user.appleId
            ).map { row in
                let (id, created, expires, revoked) = try row.decode(UUID.self, Date.self, Date.self, Date?.self)
                return SessionSummary(id: id, createdAt: created, expiresAt: expires, revokedAt: revoked)
            }
            let held = try !db.query("SELECT 1 FROM \(appleTokens) WHERE apple_id = $1", user.appleId).isEmpty
            return ExportedRecords(
                confirmations: confirmed, corrections: corrected, sessions: opened, appleRefreshTokenHeld: held,
                appleEmailDisabled: try flag.decode(Bool.self, column: 0))
        }
    }
}
