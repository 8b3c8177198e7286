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
public final class SessionVerifier: Sendable {
    enum Verdict: Equatable {
        case valid(userId: UUID, appleId: String, sessionId: UUID)
        case refused
        case undecided
    }

    private struct State {
        var verifier: SessionTokenVerifier?
        var revocations: RevocationList
        /// When the follower last heard from Accounts (an event, or a catch-up that found nothing new).
        var syncedAt: ContinuousClock.Instant?
        var verified: [String: SessionClaims] = [:]
    }

    let maximumStaleness: Duration
    let leeway: TimeInterval
    let cacheLimit: Int
    private let state: LockedValue<State>

    public init(maximumStaleness: Duration, leeway: TimeInterval = 30, cacheLimit: Int = 100_000) {
        self.maximumStaleness = maximumStaleness
        self.leeway = leeway
        self.cacheLimit = cacheLimit
        state = LockedValue(State(revocations: RevocationList(retention: 15 * 60 + leeway)))
    }

    func verdict(on token: String, now: Date = Date(), clock: ContinuousClock.Instant = .now) -> Verdict {
        let known = state.withLock { state -> (SessionTokenVerifier?, SessionClaims?, Bool) in
            let fresh = state.syncedAt.map { clock - $0 <= maximumStaleness } ?? false
            return (state.verifier, state.verified[token], fresh)
        }
        guard let verifier = known.0, known.2 else { return .undecided }
        let claims: SessionClaims
        if let cached = known.1 {
            guard cached.exp.secondsSince1970 + leeway >= now.timeIntervalSince1970 else { return .refused }
            claims = cached
        } else {
            do {
                claims = try verifier.verify(token, now: now)
            } catch IdentityError.unknownKey {
                return .undecided  // a key Accounts rotated in since we loaded ours: Accounts knows it
            } catch {
                return .refused
            }
        }
        guard let sessionId = UUID(uuidString: claims.sid) else { return .refused }
        guard let userId = UUID(uuidString: claims.sub), let appleId = claims.appleSub else { return .undecided }
        let refused = state.withLock { state -> Bool in
            if known.1 == nil {
                if state.verified.count >= cacheLimit { state.verified.removeAll(keepingCapacity: true) }
                state.verified[token] = claims
            }
            return state.revocations.refuses(session: sessionId, user: userId, issuedAt: claims.iat.date)
        }
        return refused ? .refused : .valid(userId: userId, appleId: appleId, sessionId: sessionId)
    }

    /// Accounts' public keys, loaded at start and again when a token names a key not held.
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

    /// Whether a token naming key `kid` would find its key here.
    func holdsKey(_ kid: String) -> Bool {
        state.withLock { $0.verifier?.publicKeys[kid] != nil }
    }
}
