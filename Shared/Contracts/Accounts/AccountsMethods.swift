import BusCore
import Foundation

/// `accounts.get_or_create` (seed 004 `POST /api/users`): the user with this Apple id, or a new
/// one. An existing user comes back unchanged, except that a blank email or name is filled in.
/// A new user needs `state` and `eligibilityCertified` true; a `tosVersion` that is the version in
/// effect records the acceptance, any other (an older version an app hard-codes, or none) creates
/// the account without one, answered with `needsToAcceptTOS`. Without `state` the reply is a user
/// that has not confirmed eligibility (`id` nil, nothing stored).
/// Errors: `restricted_state` (message ``accountsRestrictedStateMessage``), `invalid_argument`
/// (unknown state, missing certification). Not for `user` principals: it runs before a session exists.
public enum AccountsGetOrCreate: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var appleId: String
        public var email: String?
        public var name: String?
        public var state: String?
        public var eligibilityCertified: Bool?
        public var tosVersion: String?
        /// The client's address and user agent as the gateway saw them, for the consent record.
        public var clientIP: String?
        public var userAgent: String?

        public init(
            appleId: String, email: String? = nil, name: String? = nil, state: String? = nil,
            eligibilityCertified: Bool? = nil, tosVersion: String? = nil, clientIP: String? = nil,
            userAgent: String? = nil
        ) {
            self.appleId = appleId
            self.email = email
            self.name = name
            self.state = state
            self.eligibilityCertified = eligibilityCertified
            self.tosVersion = tosVersion
            self.clientIP = clientIP
            self.userAgent = userAgent
        }
    }
    public typealias Reply = AccountUser
    public static let type = "accounts.get_or_create"
    public static let isIdempotent = true
    public static let cachesReply = true
}

/// `accounts.get`: one user by id (`not_found` when unknown). A user principal reads only itself.
public enum AccountsGet: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var userId: UUID
        public init(userId: UUID) { self.userId = userId }
    }
    public typealias Reply = AccountUser
    public static let type = "accounts.get"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// What `accounts.accept_terms` and `accounts.decline_terms` take (seed 004 `PUT .../accept-tos`).
public struct AccountsTermsRequest: Codable, Sendable, Equatable {
    public var userId: UUID
    /// Must be the terms version in effect (`conflict` otherwise, details `currentVersion`).
    public var tosVersion: String
    public var clientIP: String?
    public var userAgent: String?

    public init(userId: UUID, tosVersion: String, clientIP: String? = nil, userAgent: String? = nil) {
        self.userId = userId
        self.tosVersion = tosVersion
        self.clientIP = clientIP
        self.userAgent = userAgent
    }
}

/// `accounts.accept_terms`: records the acceptance through Audit, then stores `tosVersion` and
/// `tosAcceptedAt`; the reply (and any read after it) shows `hasAcceptedTOS`. A retry with the
/// same idempotency key records once.
public enum AccountsAcceptTerms: RPCMethod {
    public typealias Request = AccountsTermsRequest
    public typealias Reply = AccountUser
    public static let type = "accounts.accept_terms"
    public static let isIdempotent = true
    public static let cachesReply = true
}

/// `accounts.decline_terms`: records the refusal through Audit; the user then needs to accept.
public enum AccountsDeclineTerms: RPCMethod {
    public typealias Request = AccountsTermsRequest
    public typealias Reply = AccountUser
    public static let type = "accounts.decline_terms"
    public static let isIdempotent = true
    public static let cachesReply = true
}

/// One user who lives in a state the rules in force restrict (`accounts.restricted_users`).
public struct RestrictedUser: Codable, Sendable, Equatable {
    public var id: UUID
    public var state: String
    /// The rules version the user was admitted under.
    public var eligibilityRulesVersion: String
    public var eligibilityConfirmedAt: Date?

    public init(id: UUID, state: String, eligibilityRulesVersion: String, eligibilityConfirmedAt: Date?) {
        self.id = id
        self.state = state
        self.eligibilityRulesVersion = eligibilityRulesVersion
        self.eligibilityConfirmedAt = eligibilityConfirmedAt
    }
}

/// `accounts.restricted_users` (operator only): existing users in states the rules now in force
/// restrict, in id order, keyset-paginated by `after` (the last id of a page).
public enum AccountsRestrictedUsers: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var limit: Int
        public var after: UUID?
        public init(limit: Int = 100, after: UUID? = nil) {
            self.limit = limit
            self.after = after
        }
    }
    public struct Reply: Codable, Sendable, Equatable {
        /// The version of the rules the list was computed under.
        public var rulesVersion: String
        public var restrictedStates: [String]
        public var users: [RestrictedUser]
        public init(rulesVersion: String, restrictedStates: [String], users: [RestrictedUser]) {
            self.rulesVersion = rulesVersion
            self.restrictedStates = restrictedStates
            self.users = users
        }
    }
    public static let type = "accounts.restricted_users"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// The user and version acted on; the address and agent are metadata (see ``IdempotencyFingerprinted``).
extension AccountsTermsRequest: IdempotencyFingerprinted {
    public func hashFingerprint(into hasher: inout Hasher) {
        hasher.combine(userId)
        hasher.combine(tosVersion)
    }
}
