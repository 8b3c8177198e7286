import Contracts
import Foundation

/// What the gateway knows of session tokens that stopped being good before they expire: sessions
/// signed out, and users whose every token ended (deleted accounts). Pure state, fed from Accounts'
/// events in their outbox order; ``SessionRevocationFollower`` does the I/O.
///
/// An entry is kept for as long as a token it refuses could still be presented: a token's lifetime
/// plus the clock leeway after the revocation. After that every such token has expired anyway.
struct RevocationList: Sendable {
    /// Signed-out session id → when it was revoked.
    private(set) var sessions: [UUID: Date] = [:]
    /// User id → when all of their tokens ended: a token issued at or before it is refused.
    private(set) var users: [UUID: Date] = [:]
    /// The last Accounts outbox sequence applied; nil until the list was loaded whole.
    private(set) var sequence: Int64?
    /// How long an entry matters: a token's lifetime and leeway.
    private(set) var retention: TimeInterval

    init(retention: TimeInterval) {
        self.retention = retention
    }

    /// Replaces everything with a complete list that is good up to `sequence`.
    mutating func load(_ reply: AccountsSessionRevocations.Reply, leeway: TimeInterval) {
        retention = TimeInterval(reply.tokenLifetimeSeconds) + leeway
        sessions = [:]
        users = [:]
        for session in reply.sessions { revoke(session) }
        for user in reply.users { revoke(user) }
        sequence = reply.sequence
    }

    mutating func revoke(_ session: SessionRevoked) {
        sessions[session.sessionId] = min(sessions[session.sessionId] ?? .distantFuture, session.revokedAt)
    }

    mutating func revoke(_ user: UserSessionsRevoked) {
        users[user.userId] = max(users[user.userId] ?? .distantPast, user.revokedAt)
    }

    /// What to do with an event numbered `number`.
    enum Step: Equatable {
        /// The next one: apply it.
        case apply
        /// Applied before: skip it.
        case skip
        /// One or more are missing before it (or the list is not loaded): catch up first.
        case gap
    }

    func step(for number: Int64) -> Step {
        guard let sequence else { return .gap }
        if number <= sequence { return .skip }
        return number == sequence + 1 ? .apply : .gap
    }

    /// Marks event `number` applied (after its revocation, if any, was added).
    mutating func advance(to number: Int64) {
        sequence = number
    }

    /// Whether a token of `session` for `user` issued at `issuedAt` is refused.
    func refuses(session: UUID, user: UUID?, issuedAt: Date) -> Bool {
        if sessions[session] != nil { return true }
        if let user, let ended = users[user], issuedAt <= ended { return true }
        return false
    }

    /// Forgets entries no token can outlive any more.
    mutating func prune(now: Date) {
        let horizon = now.addingTimeInterval(-retention)
        sessions = sessions.filter { $0.value > horizon }
        users = users.filter { $0.value > horizon }
    }

    var count: Int { sessions.count + users.count }
}
