import Bus
import Contracts
import Crypto
import Foundation
import Identity
import Locks
import Metrics

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
/// Verified tokens are cached by the SHA-256 of the whole token (``VerifiedTokenCache``), so a
/// token presented again costs a hash and a look-up instead of Identity's `SessionTokenVerifier` (an Ed25519 check): a
/// token's signature and claims never change, while expiry and revocation are judged from the
/// entry on every use. The cache is sized for every live session (`GATEWAY_SESSION_CACHE_ENTRIES`,
/// tokens live 15 minutes); when full it drops the expired entries, and evicts live ones (the
/// soonest to expire) only when there are more live tokens than it was sized for, which
/// `gateway_session_cache_evictions_total{reason="capacity"}` shows.
///
/// Memory is bounded: the cache holds at most `cacheLimit` tokens, and the revocation list holds
/// what was revoked within one token lifetime; past `revocationLimit` entries (a mass sign-out)
/// the verifier stops deciding and Accounts checks every token until the list shrinks again.
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
        var verified: VerifiedTokenCache
    }

    let maximumStaleness: Duration
    let leeway: TimeInterval
    let cacheLimit: Int
    let revocationLimit: Int
    private let state: LockedValue<State>
    private let expiredEvictions = Counter(label: "gateway_session_cache_evictions_total", dimensions: [("reason", "expired")])
    private let capacityEvictions = Counter(label: "gateway_session_cache_evictions_total", dimensions: [("reason", "capacity")])
    /// Signature checks of tokens new to this gateway (an Ed25519 check each).
    private let signatureChecks = Counter(label: "gateway_session_signature_checks_total")
    /// Tokens held as verified because Accounts issued them through this gateway (``holdIssued(_:now:)``).
    private let issuedHeld = Counter(label: "gateway_session_tokens_issued_held_total")

    /// `cacheLimit`: verified tokens held at most (`GATEWAY_SESSION_CACHE_ENTRIES`).
    public init(maximumStaleness: Duration, leeway: TimeInterval = 30, cacheLimit: Int = 250_000, revocationLimit: Int = 500_000) {
        self.maximumStaleness = maximumStaleness
        self.leeway = leeway
        self.cacheLimit = cacheLimit
        self.revocationLimit = revocationLimit
        state = LockedValue(
            State(revocations: RevocationList(retention: 15 * 60 + leeway), verified: VerifiedTokenCache(limit: cacheLimit, leeway: leeway)))
    }

    /// The verdict on `token`.
    func verdict(on token: String, now: Date = Date(), clock: ContinuousClock.Instant = .now) async -> Verdict {
        let digest = TokenDigest(of: token)
        if let known = knownVerdict(digest, now: now, clock: clock) { return known }
        // Not a compact JWS: refused by a view that may decide, as a bad signature is.
        guard let jws = try? CompactJWS(parsing: token) else { return state.withLock { isFresh($0, clock) } ? .refused : .undecided }
        return await verdict(on: jws, digest: digest, now: now, clock: clock)
    }

    /// The verdict on a token parsed as `jws`, whose SHA-256 is `digest` and which the caller has
    /// already looked up in the cache and not found (``Authenticator`` looked it up, then parsed it
    /// to read its `alg`): it is not looked up again.
    func verdict(
        on jws: CompactJWS, digest: TokenDigest, now: Date = Date(), clock: ContinuousClock.Instant = .now
    ) async -> Verdict {
        let known = state.withLock { state in (state.verifier, isFresh(state, clock)) }
        guard let verifier = known.0, known.1 else { return .undecided }
        let claims: SessionClaims
        signatureChecks.increment()
        do {
            claims = try verifier.verify(jws, now: now)
        } catch IdentityError.unknownKey {
            return .undecided  // a key Accounts rotated in since we loaded ours: Accounts knows it
        } catch IdentityError.expired {
            return .expired
        } catch {
            return .refused
        }
        guard let entry = VerifiedToken(claims) else { return .refused }
        return hold(entry, digest: digest, now: now)
    }

    /// A session token Accounts has just issued through this gateway (a sign-in or refresh it
    /// relayed): held as verified without a signature check (Identity's
    /// `claims(ofTokenIssuedByAccounts:)` says why that is sound), so the app's first request with
    /// it, which usually comes over the same connection, costs a look-up here instead of an
    /// Ed25519 check (69–113 µs of CPU in `identity-bench`, the largest cost of a wave's first
    /// acceptances). A token that does not read as a live session token of ours is not held; it
    /// is then judged as any other when it is presented. Nothing is held before Accounts' keys are
    /// loaded, as nothing is verified then either.
    func holdIssued(_ token: String, now: Date = Date()) {
        guard let verifier = state.withLock({ $0.verifier }), let jws = try? CompactJWS(parsing: token),
            let claims = try? verifier.claims(ofTokenIssuedByAccounts: jws, now: now), let entry = VerifiedToken(claims)
        else { return }
        _ = hold(entry, digest: TokenDigest(of: token), now: now)
        issuedHeld.increment()
    }

    /// Caches `entry` under `digest` and judges it.
    private func hold(_ entry: VerifiedToken, digest: TokenDigest, now: Date) -> Verdict {
        let (verdict, eviction) = state.withLock { state in
            let eviction = state.verified.insert(entry, for: digest, now: now)
            return (judged(entry, in: state, now: now), eviction)
        }
        if eviction.expired > 0 { expiredEvictions.increment(by: Int64(eviction.expired)) }
        if eviction.live > 0 { capacityEvictions.increment(by: Int64(eviction.live)) }
        return verdict
    }

    /// The verdict on a token whose signature was checked here before, from the cache alone: a
    /// SHA-256 of the token and one look-up under the lock, no parsing. Nil for a token not in
    /// the cache (it may not even be a session token), which ``verdict(on:now:clock:)`` must judge.
    func knownVerdict(on token: String, now: Date = Date(), clock: ContinuousClock.Instant = .now) -> Verdict? {
        knownVerdict(TokenDigest(of: token), now: now, clock: clock)
    }

    /// ``knownVerdict(on:now:clock:)`` for a token whose digest the caller holds.
    func knownVerdict(_ digest: TokenDigest, now: Date = Date(), clock: ContinuousClock.Instant = .now) -> Verdict? {
        state.withLock { state in
            guard let entry = state.verified[digest] else { return nil }
            guard isFresh(state, clock) else { return .undecided }
            return judged(entry, in: state, now: now)
        }
    }

    private func isFresh(_ state: State, _ clock: ContinuousClock.Instant) -> Bool {
        state.verifier != nil && (state.syncedAt.map { clock - $0 <= maximumStaleness } ?? false)
            && state.revocations.count <= revocationLimit
    }

    /// A verified token's verdict: expiry (with leeway), then the revocations.
    private func judged(_ entry: VerifiedToken, in state: State, now: Date) -> Verdict {
        guard entry.expiresAt.addingTimeInterval(leeway) >= now else { return .expired }
        guard let userId = entry.userId, let appleId = entry.appleId else { return .undecided }
        let refused = state.revocations.refuses(session: entry.sessionId, user: userId, issuedAt: entry.issuedAt)
        return refused ? .refused : .valid(userId: userId, appleId: appleId, sessionId: entry.sessionId)
    }

    /// How many verified tokens the cache holds now.
    var cachedTokens: Int { state.withLock { $0.verified.count } }

    /// Accounts confirmed `token` (`accounts.verify_session`) and named the account its session is
    /// bound to: a token issued at sign-in, before the account existed. A session's account never
    /// changes once bound, so later uses of the token are judged here, revocations included.
    /// Only a token whose signature was checked here is remembered.
    func bound(_ token: String, to userId: UUID, sessionId: UUID) {
        let digest = TokenDigest(of: token)
        state.withLock { state in
            _ = state.verified.update(digest) { entry in
                guard entry.sessionId == sessionId, entry.appleId != nil else { return false }
                entry.userId = userId
                return true
            }
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
