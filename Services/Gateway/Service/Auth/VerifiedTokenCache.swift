import Bus
import Crypto
import Foundation
import Identity

/// The SHA-256 of a whole session token: what the verified-token cache is keyed by. 32 bytes
/// instead of the token's ~0.5 KiB of text, and a token cannot be matched by anything but itself
/// (never key by the signature segment alone: an attacker could pair it with another payload).
package struct TokenDigest: Hashable, Sendable {
    /// swift-crypto's digest: its 32 bytes inline, hashed and compared as they are.
    let sha256: SHA256.Digest

    init(of token: String) {
        var token = token
        var sha = SHA256()
        token.withUTF8 { sha.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        sha256 = sha.finalize()
    }
}

/// What a good signature established about a token, and the account Accounts bound its session
/// to when the token was issued before the account existed. It never changes during the token's
/// lifetime (revocation and expiry are judged on every use, from this entry).
package struct VerifiedToken: Sendable {
    var userId: UUID?
    let appleId: String?
    let sessionId: UUID
    let issuedAt: Date
    let expiresAt: Date
}

extension VerifiedToken {
    /// The entry for a token with these claims; nil when its session id is not a UUID.
    init?(_ claims: SessionClaims) {
        guard let sessionId = MessageID.parse(claims.sid) else { return nil }
        self.init(
            userId: MessageID.parse(claims.sub), appleId: claims.appleSub, sessionId: sessionId, issuedAt: claims.issuedAt,
            expiresAt: claims.expiresAt)
    }
}

/// The gateway's verified session tokens, by ``TokenDigest``, at most `limit` of them.
///
/// Sized to hold every live token: a token lives 15 minutes, so when the cache is full the
/// entries past their expiry (plus the leeway) are dropped, which in a cache sized for the live
/// sessions frees most of it. Only when the live tokens themselves nearly fill it (more than
/// 15/16 of `limit` left after that) are live entries evicted, those expiring soonest (used the
/// longest, about to be replaced by a refresh) down to 3/4 of `limit`. Either sweep frees at
/// least a sixteenth of `limit`, so its O(`limit`) pass (O(`limit` log `limit`) for the second)
/// is paid once per that many new tokens; a look-up or an insert is otherwise one hash probe.
package struct VerifiedTokenCache {
    /// What a sweep removed: entries past their expiry, and live entries evicted for room.
    struct Eviction: Equatable {
        var expired = 0
        var live = 0
    }

    let limit: Int
    /// How long after its expiry a token is still judged (``SessionVerifier/leeway``): kept until then.
    let leeway: TimeInterval
    private var entries: [TokenDigest: VerifiedToken] = [:]

    init(limit: Int, leeway: TimeInterval) {
        precondition(limit >= 1, "the verified-token cache needs room for at least one token")
        self.limit = limit
        self.leeway = leeway
    }

    var count: Int { entries.count }

    subscript(digest: TokenDigest) -> VerifiedToken? { entries[digest] }

    /// Remembers `token` under `digest`, first making room when the cache is full.
    @discardableResult
    mutating func insert(_ token: VerifiedToken, for digest: TokenDigest, now: Date) -> Eviction {
        var eviction = Eviction()
        if entries[digest] == nil, entries.count >= limit { eviction = makeRoom(now: now) }
        entries[digest] = token
        return eviction
    }

    /// Updates an entry already held (an account bound to its session); false when none is.
    mutating func update(_ digest: TokenDigest, _ body: (inout VerifiedToken) -> Bool) -> Bool {
        guard var entry = entries[digest], body(&entry) else { return false }
        entries[digest] = entry
        return true
    }

    private mutating func makeRoom(now: Date) -> Eviction {
        var eviction = Eviction()
        let before = entries.count
        let expired = entries.compactMap { $0.value.expiresAt.addingTimeInterval(leeway) < now ? $0.key : nil }
        for digest in expired { entries.removeValue(forKey: digest) }
        eviction.expired = before - entries.count
        guard entries.count > limit - max(1, limit / 16) else { return eviction }
        // More live tokens than the cache was sized for: the soonest to expire go.
        let keep = limit * 3 / 4
        // Expiries and keys only (40 bytes an entry), not copies of the entries, are sorted.
        var byExpiry = entries.map { (expiresAt: $0.value.expiresAt, digest: $0.key) }
        byExpiry.sort { $0.expiresAt < $1.expiresAt }
        for item in byExpiry.prefix(entries.count - keep) { entries.removeValue(forKey: item.digest) }
        eviction.live = byExpiry.count - entries.count
        return eviction
    }
}
