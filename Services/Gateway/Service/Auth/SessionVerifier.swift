import Bus
import Contracts
import Crypto
import Foundation
import Identity
import Locks

/// Verifies session tokens in the gateway, so the common request makes no bus call to Accounts
/// for its credential: the Ed25519 signature with Accounts' public keys (`accounts.public_keys`),
/// expiry, issuer and audience, then the ``RevocationList`` that Accounts' events keep current.
///
/// It answers only when it may: while the list is stale (no word from Accounts' event stream for
/// ``maximumStaleness``: Accounts unreachable, the follower behind), for a key it does not hold,
/// and for tokens it cannot fully judge (opened before the account existed, or issued before
/// tokens carried the Apple id), it answers ``Verdict/undecided`` and the caller asks Accounts
/// (`accounts.verify_session`), which fails closed. So a revocation takes effect here within the
/// event's delivery (milliseconds), at worst within ``maximumStaleness``.
///
/// Verified signatures are cached by token (bounded; cleared when full), so a token presented
/// again costs a dictionary look-up instead of an Ed25519 check; revocation is checked every time.
///
/// Memory is bounded: the cache holds at most `cacheLimit` tokens (about 0.5 KiB each), and the
/// revocation list holds what was revoked within one token lifetime; past `revocationLimit`
/// entries (a mass sign-out) the verifier stops deciding and Accounts checks every token until
/// the list shrinks again.
public final class SessionVerifier: Sendable {
    enum Verdict: Equatable {
        case valid(userId: UUID, appleId: String, sessionId: UUID)
        case refused
        /// A good signature whose lifetime ended: the app should refresh.
        case expired
        case undecided
    }

    private struct State {
        var verifier: SessionTokenVerifier?
        var revocations: RevocationList
        /// When the follower last heard from Accounts (an event, or a catch-up that found nothing new).
        var syncedAt: ContinuousClock.Instant?
        var verified: [String: Verified] = [:]
    }

    /// What a good signature established about a token, and the account Accounts bound its session
    /// to when the token was issued before the account existed.
    private struct Verified {
        var userId: UUID?
        let appleId: String?
        let sessionId: UUID
        let issuedAt: Date
        let expiresAt: Date
    }

    let maximumStaleness: Duration
    let leeway: TimeInterval
    let cacheLimit: Int
    let revocationLimit: Int
    private let state: LockedValue<State>

    public init(maximumStaleness: Duration, leeway: TimeInterval = 30, cacheLimit: Int = 20_000, revocationLimit: Int = 500_000) {
        self.maximumStaleness = maximumStaleness
        self.leeway = leeway
        self.cacheLimit = cacheLimit
        self.revocationLimit = revocationLimit
        state = LockedValue(State(revocations: RevocationList(retention: 15 * 60 + leeway)))
    }

    func verdict(on token: String, now: Date = Date(), clock: ContinuousClock.Instant = .now) async -> Verdict {
        if let known = knownVerdict(on: token, now: now, clock: clock) { return known }
        let known = state.withLock { state in (state.verifier, isFresh(state, clock)) }
        guard let verifier = known.0, known.1 else { return .undecided }
        let claims: SessionClaims
        do {
            claims = try await verifier.verify(token, now: now)
        } catch IdentityError.unknownKey {
            return .undecided  // a key Accounts rotated in since we loaded ours: Accounts knows it
        } catch IdentityError.expired {
            return .expired
        } catch {
            return .refused
        }
        guard let sessionId = MessageID.parse(claims.sid) else { return .refused }
        let entry = Verified(
            userId: MessageID.parse(claims.sub), appleId: claims.appleSub, sessionId: sessionId, issuedAt: claims.issuedAt,
            expiresAt: claims.expiresAt)
        return state.withLock { state in
            if state.verified.count >= cacheLimit { state.verified.removeAll(keepingCapacity: true) }
            state.verified[token] = entry
            return judged(entry, in: state, now: now)
        }
    }

    /// The verdict on a token whose signature was checked here before, from the cache alone: one
    /// look-up under the lock, no parsing. Nil for a token not in the cache (it may not even be a
    /// session token), which ``verdict(on:now:clock:)`` must judge.
    func knownVerdict(on token: String, now: Date = Date(), clock: ContinuousClock.Instant = .now) -> Verdict? {
        state.withLock { state in
            guard let entry = state.verified[token] else { return nil }
            guard isFresh(state, clock) else { return .undecided }
            return judged(entry, in: state, now: now)
        }
    }

    private func isFresh(_ state: State, _ clock: ContinuousClock.Instant) -> Bool {
        state.verifier != nil && (state.syncedAt.map { clock - $0 <= maximumStaleness } ?? false)
            && state.revocations.count <= revocationLimit
    }

    /// A verified token's verdict: expiry (with leeway), then the revocations.
    private func judged(_ entry: Verified, in state: State, now: Date) -> Verdict {
        guard entry.expiresAt.addingTimeInterval(leeway) >= now else { return .expired }
        guard let userId = entry.userId, let appleId = entry.appleId else { return .undecided }
        let refused = state.revocations.refuses(session: entry.sessionId, user: userId, issuedAt: entry.issuedAt)
        return refused ? .refused : .valid(userId: userId, appleId: appleId, sessionId: entry.sessionId)
    }

    /// Accounts confirmed `token` (`accounts.verify_session`) and named the account its session is
    /// bound to: a token issued at sign-in, before the account existed. A session's account never
    /// changes once bound, so later uses of the token are judged here, revocations included.
    /// Only a token whose signature was checked here is remembered.
    func bound(_ token: String, to userId: UUID, sessionId: UUID) {
        state.withLock { state in
            guard var entry = state.verified[token], entry.sessionId == sessionId, entry.appleId != nil else { return }
            entry.userId = userId
            state.verified[token] = entry
        }
    }

    /// Accounts' public keys, loaded by ``SessionRevocationFollower`` at start and again every
    /// minute; meanwhile a token naming a key not held is ``Verdict/undecided`` (Accounts checks it).
    func useKeys(_ keys: [NamedPublicKey]) {
        var publicKeys: [String: Curve25519.Signing.PublicKey] = [:]
        for named in keys where named.algorithm == "Ed25519" {
            if let raw = Data(base64Encoded: named.publicKey), let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw) {
                publicKeys[named.keyId] = key
            }
        }
        let verifier = SessionTokenVerifier(publicKeys: publicKeys, leeway: leeway)
        state.withLock { $0.verifier = verifier }
    }

    /// Runs `body` on the revocation list (the follower applies events and loads through it).
    func withRevocations<T>(_ body: (inout RevocationList) -> T) -> T {
        state.withLock { body(&$0.revocations) }
    }

    /// Whether the list heard from Accounts within ``maximumStaleness``.
    func isFresh(at clock: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in state.syncedAt.map { clock - $0 <= maximumStaleness } ?? false }
    }

    /// The terms version `user` accepted as last held (``RevocationList/acceptedTerms``); nil when
    /// none is held or the list is stale, so the caller asks Accounts.
    func acceptedTerms(of user: UUID, clock: ContinuousClock.Instant = .now) -> String? {
        state.withLock { state in
            guard let synced = state.syncedAt, clock - synced <= maximumStaleness else { return nil }
            return state.revocations.acceptedTerms[user]
        }
    }

    /// Holds Accounts' answer that `user` accepted `version`, read at outbox sequence `asOf`.
    func rememberAcceptedTerms(_ version: String, of user: UUID, asOf: Int64) {
        state.withLock { _ = $0.revocations.rememberAcceptedTerms(version, of: user, asOf: asOf) }
    }

    /// The list is current as of now.
    func markSynced(at instant: ContinuousClock.Instant = .now) {
        state.withLock { $0.syncedAt = instant }
    }

    /// A sign-out this gateway carried: refused here at once, before the event comes back.
    func revoked(_ session: SessionRevoked) {
        state.withLock { $0.revocations.revoke(session) }
    }

    /// An account deletion this gateway carried, likewise.
    func revoked(_ user: UserSessionsRevoked) {
        state.withLock { $0.revocations.revoke(user) }
    }
}
