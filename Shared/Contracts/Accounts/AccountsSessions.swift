import BusCore
import Foundation

/// `accounts.sign_in_with_apple`: verifies an Apple identity token and opens a session. The user
/// is what `accounts.get_or_create` answers without eligibility fields: the stored user, or an
/// unconfirmed one (`id` nil) for a new Apple id, whose session is bound to the Apple id until
/// `get_or_create` creates the account. Errors: `unauthenticated` for any refused token (nothing
/// is written), `unavailable` when Apple's keys cannot be loaded. For the gateway, not `user`
/// principals.
public enum AccountsSignInWithApple: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        /// The identity token (JWT) Apple gave the app.
        public var identityToken: String
        /// The app's raw nonce; when given, the token's `nonce` must be it or its SHA-256 hex.
        public var nonce: String?
        /// Apple sends email and name to the app once, on the first sign-in.
        public var email: String?
        public var name: String?
        public var clientIP: String?
        public var userAgent: String?
        /// The authorization code Apple gave the app with the identity token: exchanged at Apple
        /// for a refresh token, kept encrypted so deleting the account can revoke it. Optional;
        /// a failed exchange does not fail the sign-in.
        public var authorizationCode: String?

        public init(
            identityToken: String, nonce: String? = nil, email: String? = nil, name: String? = nil,
            clientIP: String? = nil, userAgent: String? = nil, authorizationCode: String? = nil
        ) {
            self.authorizationCode = authorizationCode
            self.identityToken = identityToken
            self.nonce = nonce
            self.email = email
            self.name = name
            self.clientIP = clientIP
            self.userAgent = userAgent
        }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var user: AccountUser
        public var sessionId: UUID
        /// Short-lived signed token (EdDSA JWT) the app sends with each request.
        public var sessionToken: String
        public var sessionExpiresAt: Date
        /// Opaque, long-lived; exchanged through `accounts.refresh_session`. Only its hash is stored.
        public var refreshToken: String
        /// With an `authorizationCode`: whether Apple's refresh token was obtained and stored
        /// (false: the exchange failed, logged; the sign-in stands). Nil without a code.
        public var appleTokenStored: Bool?
        /// The account's id, or for an Apple id without an account the id it will get when
        /// eligibility is confirmed (what Supabase Auth clients know the user by). Nil only from
        /// an Accounts that predates it.
        public var accountId: UUID?

        public init(
            user: AccountUser, sessionId: UUID, sessionToken: String, sessionExpiresAt: Date, refreshToken: String,
            appleTokenStored: Bool? = nil, accountId: UUID? = nil
        ) {
            self.accountId = accountId
            self.appleTokenStored = appleTokenStored
            self.user = user
            self.sessionId = sessionId
            self.sessionToken = sessionToken
            self.sessionExpiresAt = sessionExpiresAt
            self.refreshToken = refreshToken
        }
    }
    public static let type = "accounts.sign_in_with_apple"
    public static let isIdempotent = false
    public static let cachesReply = false
}

/// A new session token and refresh token for a session (`accounts.refresh_session`).
public struct SessionGrant: Codable, Sendable, Equatable {
    public var sessionId: UUID
    public var sessionToken: String
    public var sessionExpiresAt: Date
    public var refreshToken: String
    /// The session's account, nil while the Apple id has none.
    public var userId: UUID?
    /// The account's id or the one it will get (see `AccountsSignInWithApple.Reply.accountId`).
    public var accountId: UUID?
    public var appleId: String?

    public init(
        sessionId: UUID, sessionToken: String, sessionExpiresAt: Date, refreshToken: String,
        userId: UUID? = nil, accountId: UUID? = nil, appleId: String? = nil
    ) {
        self.userId = userId
        self.accountId = accountId
        self.appleId = appleId
        self.sessionId = sessionId
        self.sessionToken = sessionToken
        self.sessionExpiresAt = sessionExpiresAt
        self.refreshToken = refreshToken
    }
}

/// `accounts.refresh_session`: exchanges a refresh token for a new session token and a new
/// refresh token (rotation: the presented one stops working). `unauthenticated` when the refresh
/// token is unknown, already used, revoked or expired, or the account was deleted.
public enum AccountsRefreshSession: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var refreshToken: String
        public init(refreshToken: String) { self.refreshToken = refreshToken }
    }
    public typealias Reply = SessionGrant
    public static let type = "accounts.refresh_session"
    public static let isIdempotent = false
    public static let cachesReply = false
}

/// `accounts.sign_out`: revokes a session, named by its refresh token or its id (exactly one),
/// and with `scope` the user's other sessions too. Session tokens already issued are refused by
/// `accounts.verify_session` at once, and by every gateway once the `session.revoked` events
/// reach it (the gateway that carried the sign-out at once). A `user` principal may end only its
/// own sessions.
/// Repeating it is harmless; `not_found` when no such session exists.
public enum AccountsSignOut: RPCMethod {
    /// Which sessions end (Supabase Auth's `scope`): the named one (`local`, the default), every
    /// open session of its user or Apple id (`global`), or all of those but the named one (`others`).
    public enum Scope: String, Codable, Sendable, Equatable {
        case local, global, others
    }
    public struct Request: Codable, Sendable, Equatable {
        public var refreshToken: String?
        public var sessionId: UUID?
        public var scope: Scope?
        public init(refreshToken: String? = nil, sessionId: UUID? = nil, scope: Scope? = nil) {
            self.refreshToken = refreshToken
            self.sessionId = sessionId
            self.scope = scope
        }
    }
    public struct Reply: Codable, Sendable, Equatable {
        /// The named session; revoked unless the scope was `others`.
        public var sessionId: UUID
        public var revokedAt: Date?
        /// With a scope: every session this call ended (each also announced as `session.revoked`).
        public var ended: [SessionRevoked]?
        public init(sessionId: UUID, revokedAt: Date?, ended: [SessionRevoked]? = nil) {
            self.sessionId = sessionId
            self.revokedAt = revokedAt
            self.ended = ended
        }
    }
    public static let type = "accounts.sign_out"
    public static let isIdempotent = true
    public static let cachesReply = true
}

/// `accounts.verify_session` (for the gateway): who a session token speaks for. Checks the
/// signature and expiry, then that the session is neither revoked nor expired and its account
/// not deleted; `unauthenticated` otherwise (details `reason` = `session_expired` when only the
/// token's lifetime ended, so the caller can tell a refresh from a new sign-in). `userId` is nil
/// while the Apple id has no account yet (the app must call `accounts.get_or_create` with
/// eligibility).
public enum AccountsVerifySession: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var sessionToken: String
        public init(sessionToken: String) { self.sessionToken = sessionToken }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var userId: UUID?
        public var appleId: String
        public var sessionId: UUID
        /// When the token expires (the session itself may last longer, through refreshes).
        public var expiresAt: Date
        /// The account's id or the one it will get (see `AccountsSignInWithApple.Reply.accountId`).
        public var accountId: UUID?
        public init(userId: UUID?, appleId: String, sessionId: UUID, expiresAt: Date, accountId: UUID? = nil) {
            self.accountId = accountId
            self.userId = userId
            self.appleId = appleId
            self.sessionId = sessionId
            self.expiresAt = expiresAt
        }
    }
    public static let type = "accounts.verify_session"
    public static let isIdempotent = true
    public static let cachesReply = false
}
