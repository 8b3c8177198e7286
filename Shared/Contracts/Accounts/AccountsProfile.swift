import BusCore
import Foundation

/// `accounts.correct_profile`: the user corrects their own name, email or state (a privacy
/// right: inaccurate data is corrected on request). Fields left nil stay as they are; at least one
/// must be given. A new state is judged by the eligibility rules in force, as at sign-up, and
/// stored with a new eligibility confirmation under them. Every correction is recorded (which
/// fields, when, from where; never the old values).
/// Errors, with nothing changed: `invalid_argument` (no field, an empty or overlong name, an email
/// that is not an address, a state that is not a US state or DC), `restricted_state` (message
/// ``accountsRestrictedStateMessage``: contests are not offered there).
public enum AccountsCorrectProfile: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var userId: UUID
        public var name: String?
        public var email: String?
        public var state: String?
        /// The client's address and user agent as the gateway saw them, for the correction record.
        public var clientIP: String?
        public var userAgent: String?

        public init(userId: UUID, name: String? = nil, email: String? = nil, state: String? = nil, clientIP: String? = nil, userAgent: String? = nil)
        {
            self.userId = userId
            self.name = name
            self.email = email
            self.state = state
            self.clientIP = clientIP
            self.userAgent = userAgent
        }
    }
    public typealias Reply = AccountUser
    public static let type = "accounts.correct_profile"
    public static let isIdempotent = true
    /// A write: a retry gets the first answer.
    public static let cachesReply = true
}

/// One recorded profile correction: which fields changed, when and from where (the old values are
/// not kept: a correction replaces data the user says is wrong).
public struct ProfileCorrection: Codable, Sendable, Equatable {
    public var correctedAt: Date
    /// Names of the changed fields (`name`, `email`, `state`).
    public var fields: [String]
    public var clientIP: String?
    public var userAgent: String?

    public init(correctedAt: Date, fields: [String], clientIP: String?, userAgent: String?) {
        self.correctedAt = correctedAt
        self.fields = fields
        self.clientIP = clientIP
        self.userAgent = userAgent
    }
}

/// One eligibility confirmation as it was recorded (sign-up, and each corrected state).
public struct EligibilityConfirmation: Codable, Sendable, Equatable {
    public var state: String
    public var rulesVersion: String
    public var minimumAge: Int
    public var confirmedAt: Date
    public var clientIP: String?
    public var userAgent: String?

    public init(state: String, rulesVersion: String, minimumAge: Int, confirmedAt: Date, clientIP: String?, userAgent: String?) {
        self.state = state
        self.rulesVersion = rulesVersion
        self.minimumAge = minimumAge
        self.confirmedAt = confirmedAt
        self.clientIP = clientIP
        self.userAgent = userAgent
    }
}

/// A session as its user sees it in an export: when it was opened, when it ends and whether it was
/// ended. Never a token: Accounts keeps only a hash of the refresh token, and that is not exported.
public struct SessionSummary: Codable, Sendable, Equatable {
    public var id: UUID
    public var createdAt: Date
    public var expiresAt: Date
    public var revokedAt: Date?

    public init(id: UUID, createdAt: Date, expiresAt: Date, revokedAt: Date?) {
        self.id = id
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
    }
}

/// `accounts.export`: everything Accounts holds about one user, for the user's data export. A
/// user principal exports only itself. Secrets are never part of it: no refresh-token hash, no
/// Apple refresh token (only whether one is held, so the user knows deletion will revoke it).
public enum AccountsExport: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var userId: UUID
        public init(userId: UUID) { self.userId = userId }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var user: AccountUser
        public var eligibilityConfirmations: [EligibilityConfirmation]
        public var profileCorrections: [ProfileCorrection]
        /// Every session of the user's Apple id, newest first.
        public var sessions: [SessionSummary]
        /// Whether an Apple refresh token (from Sign in with Apple's authorization code) is held.
        public var appleRefreshTokenHeld: Bool
        /// Apple said mail to the user's relay address bounces (`email-disabled`).
        public var appleEmailDisabled: Bool

        public init(
            user: AccountUser, eligibilityConfirmations: [EligibilityConfirmation], profileCorrections: [ProfileCorrection],
            sessions: [SessionSummary], appleRefreshTokenHeld: Bool, appleEmailDisabled: Bool
        ) {
            self.user = user
            self.eligibilityConfirmations = eligibilityConfirmations
            self.profileCorrections = profileCorrections
            self.sessions = sessions
            self.appleRefreshTokenHeld = appleRefreshTokenHeld
            self.appleEmailDisabled = appleEmailDisabled
        }
    }
    public static let type = "accounts.export"
    public static let isIdempotent = true
    /// A read.
    public static let cachesReply = false
}
