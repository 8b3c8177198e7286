import BusCore
import Foundation

/// The events Accounts publishes (through its outbox) when session tokens stop being good before
/// they expire, so a gateway that verifies tokens itself refuses them too. Account deletion is the
/// other such event, ``AccountsEvents/deleted``: every token of the user is refused after it.
public enum SessionEvents {
    /// One session ended (signed out, or every session of a user that declined the terms); the
    /// payload is ``SessionRevoked``.
    public static let revoked = "session.revoked"
}

/// The payload of `session.revoked`.
public struct SessionRevoked: Codable, Sendable, Equatable {
    public var sessionId: UUID
    /// Nil for a session opened before its account existed.
    public var userId: UUID?
    public var revokedAt: Date

    public init(sessionId: UUID, userId: UUID?, revokedAt: Date) {
        self.sessionId = sessionId
        self.userId = userId
        self.revokedAt = revokedAt
    }
}

/// Every session of `userId` ended at `revokedAt` (the account was deleted): every token of the
/// user issued at or before it is refused.
public struct UserSessionsRevoked: Codable, Sendable, Equatable {
    public var userId: UUID
    public var revokedAt: Date

    public init(userId: UUID, revokedAt: Date) {
        self.userId = userId
        self.revokedAt = revokedAt
    }
}

/// `accounts.session_revocations`: what a gateway needs before it may verify session tokens
/// itself: every revocation since `since` (sessions signed out, users signed out everywhere or
/// deleted), and the outbox sequence they are complete up to, so the gateway follows the events
/// from there without a gap. For the gateway (service principal) and operators.
public enum AccountsSessionRevocations: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        /// The oldest revocation that can still matter: now minus a token's lifetime and leeway.
        public var since: Date
        public init(since: Date) { self.since = since }
    }

    public struct Reply: Codable, Sendable, Equatable {
        /// The outbox sequence this list is complete up to: follow events after it.
        public var sequence: Int64
        public var sessions: [SessionRevoked]
        /// Users whose every session ended (deleted accounts included).
        public var users: [UserSessionsRevoked]
        /// How long session tokens live, in seconds, so the follower keeps entries that long.
        public var tokenLifetimeSeconds: Int

        public init(sequence: Int64, sessions: [SessionRevoked], users: [UserSessionsRevoked], tokenLifetimeSeconds: Int) {
            self.sequence = sequence
            self.sessions = sessions
            self.users = users
            self.tokenLifetimeSeconds = tokenLifetimeSeconds
        }
    }

    public static let type = "accounts.session_revocations"
    public static let isIdempotent = true
    public static let cachesReply = false
}
