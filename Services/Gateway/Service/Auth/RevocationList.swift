import Contracts
import Foundation
import ServiceKit

/// What the gateway knows of session tokens that stopped being good before they expire: sessions
/// signed out, and users whose every token ended (deleted accounts); and the terms acceptances
/// those events invalidate. Pure state, fed from Accounts' events in their outbox order;
/// ``SessionRevocationFollower`` does the I/O.
///
/// An entry is kept for as long as a token it refuses could still be presented: a token's lifetime
/// plus the clock leeway after the revocation. After that every such token has expired anyway.
package struct RevocationList: Sendable {
    /// Signed-out session id → when it was revoked.
    private(set) var sessions: [UUID: Date] = [:]
    /// User id → when all of their tokens ended: a token issued at or before it is refused.
    private(set) var users: [UUID: Date] = [:]
    /// The last Accounts outbox sequence applied; nil until the list was loaded whole.
    private(set) var sequence: Int64?
    /// How long an entry matters: a token's lifetime and leeway.
    private(set) var retention: TimeInterval
    /// User id → the terms version their last word accepted, as Accounts answered
    /// (`accounts.terms_standing`) at an outbox sequence this list had not passed. Dropped by the
    /// user's `accounts.terms_declined`, any later `session.revoked` of the user and deletion; only
    /// acceptances are held, so a user who has to accept is asked about again (``TermsGate``).
    private(set) var acceptedTerms: [UUID: String] = [:]
    /// At most this many users' acceptances are held (about 100 bytes each); past it the map
    /// starts over and users are asked about again.
    static let acceptedTermsLimit = 200_000

    init(retention: TimeInterval) {
        self.retention = retention
    }

    /// Replaces everything with a complete list that is good up to `sequence`.
    mutating func load(_ reply: AccountsSessionRevocations.Reply, leeway: TimeInterval) {
        retention = TimeInterval(reply.tokenLifetimeSeconds) + leeway
        sessions = [:]
        users = [:]
        acceptedTerms = [:]
        for session in reply.sessions { revoke(session) }
        for user in reply.users { revoke(user) }
        sequence = reply.sequence
    }

    mutating func revoke(_ session: SessionRevoked) {
        sessions[session.sessionId] = min(sessions[session.sessionId] ?? .distantFuture, session.revokedAt)
        if let user = session.userId { acceptedTerms[user] = nil }
    }

    mutating func revoke(_ user: UserSessionsRevoked) {
        users[user.userId] = max(users[user.userId] ?? .distantPast, user.revokedAt)
        acceptedTerms[user.userId] = nil
    }

    /// The user declined the terms (`accounts.terms_declined`): their held acceptance goes.
    mutating func declined(_ event: TermsDeclined) {
        acceptedTerms[event.userId] = nil
    }

    /// Holds that `user` accepted terms `version`, as Accounts answered after reading its outbox
    /// up to `asOf`; refused (false) when events past `asOf` were already applied (one of them may
    /// have been this user's decline) or the list is not loaded.
    @discardableResult
    mutating func rememberAcceptedTerms(_ version: String, of user: UUID, asOf: Int64) -> Bool {
        guard let sequence, sequence <= asOf else { return false }
        if acceptedTerms.count >= Self.acceptedTermsLimit { acceptedTerms.removeAll(keepingCapacity: true) }
        acceptedTerms[user] = version
        return true
    }

    /// Where event `number` stands against the list (a gap while it is not loaded).
    func order(of number: Int64) -> EventOrder { EventOrder(number, after: sequence) }

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
