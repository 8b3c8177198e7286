import Bus
import Foundation
import Identity
import Postgres
import ServiceKit

/// What applying one Apple notification did.
public struct AppliedNotification: Sendable {
    /// `applied`, `duplicate` or `ignored`.
    public var outcome: String
    /// The user deleted by an `account-delete`.
    public var deletedUser: UUID?
    public var deletion: DeletionOutcome?
}

extension AccountsStore {
    /// Applies `notification` once, in one transaction with the record of it under `key`: a key
    /// already recorded changes nothing (`duplicate`). An Apple id with no account, or an event
    /// type we do not act on, is recorded as `ignored`.
    public func apply(
        _ notification: AppleServerNotification, key: String, certifier: DeletionCertifier, outbox: Outbox
    ) async throws -> AppliedNotification {
        let names = self
        return try await pool.withTransaction { db in
            let fresh = try db.execute(
                "INSERT INTO \(names.appleNotifications) (key, event_type, outcome) VALUES ($1, $2, 'pending') ON CONFLICT (key) DO NOTHING",
                key, String(notification.type.prefix(64)))
            guard fresh == 1 else { return AppliedNotification(outcome: "duplicate") }
            let sub = notification.subject
            // Locked: a deletion confirmed at the same moment goes first, and this one then finds no user.
            let user = try db.query("SELECT id FROM \(names.users) WHERE apple_id = $1 FOR UPDATE", sub).first?.decode(UUID.self, column: 0)
            var result = AppliedNotification(outcome: "ignored")
            switch notification.type {
            case "email-disabled", "email-enabled":
                let changed = try db.execute(
                    "UPDATE \(names.users) SET apple_email_disabled = $2 WHERE apple_id = $1", sub, notification.type == "email-disabled")
                if changed > 0 { result.outcome = "applied" }
            case "consent-revoked":
                // Sessions opened before the account existed belong to the Apple id too.
                let sessions = try db.execute(
                    "UPDATE \(names.sessions) SET revoked_at = date_trunc('milliseconds', now()) WHERE apple_id = $1 AND revoked_at IS NULL", sub)
                let tokens = try db.execute("DELETE FROM \(names.appleTokens) WHERE apple_id = $1", sub)
                if user != nil || sessions + tokens > 0 { result.outcome = "applied" }
            case "account-delete":
                if let user {
                    result.deletion = try Self.delete(
                        user, request: UUID(), requestedAt: notification.eventTime, trigger: .appleAccountDelete, documents: nil,
                        names: names, certifier: certifier, outbox: outbox, on: db)
                    result.deletedUser = user
                    result.outcome = "applied"
                }
            default: break
            }
            try db.execute("UPDATE \(names.appleNotifications) SET outcome = $2 WHERE key = $1", key, result.outcome)
            return result
        }
    }
}
