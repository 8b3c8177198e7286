import Foundation
import Postgres

/// One `users` row.
public struct StoredUser: Sendable, Equatable {
    public var id: UUID
    public var appleId: String
    public var email: String?
    public var name: String?
    public var username: String?
    public var state: String
    public var eligibilityConfirmedAt: Date
    public var eligibilityRulesVersion: String
    public var tosVersion: String?
    public var tosAcceptedAt: Date?
    /// The Audit record of the sign-up acceptance; `nil` while it is still to be recorded.
    public var signupReceiptId: UUID?
    public var createdAt: Date
    /// When the user's last word on the terms was a decline; nil once they accept again.
    public var tosDeclinedAt: Date?

    private static let columnNames = [
        "id", "apple_id", "email", "name", "username", "state", "eligibility_confirmed_at", "eligibility_rules_version",
        "tos_version", "tos_accepted_at", "signup_receipt_id", "created_at", "tos_declined_at",
    ]

    /// The columns ``decode(_:)`` reads, in order.
    static let columns = columnNames.joined(separator: ", ")

    /// ``columns`` qualified by a table alias, for statements that join another relation.
    static func columns(of alias: String) -> String {
        columnNames.map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    static func decode(_ row: PostgresRow) throws -> StoredUser {
        let (id, appleId, email, name, username, state, confirmedAt, rulesVersion, tosVersion, tosAcceptedAt, receipt, createdAt) =
            try row.decode(
                UUID.self, String.self, String?.self, String?.self, String?.self, String.self, Date.self, String.self,
                String?.self, Date?.self, UUID?.self, Date.self)
        return StoredUser(
            id: id, appleId: appleId, email: email, name: name, username: username, state: state,
            eligibilityConfirmedAt: confirmedAt, eligibilityRulesVersion: rulesVersion, tosVersion: tosVersion,
            tosAcceptedAt: tosAcceptedAt, signupReceiptId: receipt, createdAt: createdAt,
            tosDeclinedAt: try row.decode(Date?.self, column: 12))
    }
}

/// A user about to be stored: eligibility confirmed under `rules`, the terms version accepted.
public struct NewUser: Sendable, Equatable {
    public var appleId: String
    public var email: String?
    public var name: String?
    public var state: String
    public var rulesVersion: String
    public var minimumAge: Int
    /// The terms version accepted with the sign-up; nil when it was not the one in effect.
    public var tosVersion: String?
    public var clientIP: String?
    public var userAgent: String?
}
