import Contracts
import Crypto
import Foundation
import Hex
import Identity
import ServiceKit
import Testing

@testable import GatewayService

/// The gateway's verified-token cache: a token seen again is judged from it (expiry and
/// revocations included) without its signature checked again, only the whole token matches its
/// entry, and it holds at most its limit, dropping expired entries before live ones.
@Suite struct VerifiedTokenCacheTests {
    let signing = try! SessionSigningKey.generate(id: "s1")
    var tokens: SessionTokens { SessionTokens(keys: try! SessionKeySet(current: signing)) }
    let user = UUID()
    let session = UUID()

    func token(user: UUID? = nil, session: UUID? = nil, issuedAt: Date = Date()) async throws -> String {
        try await tokens.issue(
            userID: (user ?? self.user).uuidString.lowercased(), sessionID: (session ?? self.session).uuidString.lowercased(),
            appleSubject: "apple.1", now: issuedAt
        ).token
    }

    func loadedVerifier(cacheLimit: Int = 1000) -> SessionVerifier {
        let verifier = SessionVerifier(maximumStaleness: SessionVerifierTests.staleness, cacheLimit: cacheLimit)
        verifier.useKeys([NamedPublicKey(keyId: "s1", publicKey: signing.publicKey.rawRepresentation.base64EncodedString())])
        verifier.withRevocations { $0.load(.init(sequence: 1, sessions: [], users: [], tokenLifetimeSeconds: 900), leeway: 30) }
        verifier.markSynced()
        return verifier
    }

    /// With Accounts' key gone, no signature can be checked: what is still valid came from the cache.
    @Test func aTokenSeenAgainIsJudgedFromTheCache() async throws {
        let verifier = loadedVerifier()
        let seen = try await token()
        #expect(await verifier.verdict(on: seen) == .valid(userId: user, appleId: "apple.1", sessionId: session))
        verifier.useKeys([])
        #expect(verifier.knownVerdict(on: seen) == .valid(userId: user, appleId: "apple.1", sessionId: session))
        #expect(await verifier.verdict(on: seen) == .valid(userId: user, appleId: "apple.1", sessionId: session))
        #expect(await verifier.verdict(on: try await token(session: UUID())) == .undecided, "a new token needs the key")
        #expect(verifier.cachedTokens == 1)
    }

    @Test func aCachedTokenIsRefusedOnceRevokedAndExpiredOncePastItsLifetime() async throws {
        let verifier = loadedVerifier()
        let signedOut = try await token(issuedAt: Date().addingTimeInterval(-10))
        let expiring = try await token(user: UUID(), session: UUID())
        #expect(await verifier.verdict(on: signedOut) != .refused)
        #expect(await verifier.verdict(on: expiring) != .expired)
        verifier.useKeys([])  // from here on, only the cache can judge
        verifier.revoked(SessionRevoked(sessionId: session, userId: user, revokedAt: Date()))
        #expect(await verifier.verdict(on: signedOut) == .refused)
        let pastLifetime = Date().addingTimeInterval(15 * 60 + 31)
        #expect(verifier.knownVerdict(on: expiring, now: pastLifetime) == .expired)
        #expect(await verifier.verdict(on: expiring, now: Date().addingTimeInterval(15 * 60 - 60)) != .expired)
        // A stale view decides nothing, cached or not.
        verifier.markSynced(at: .now - SessionVerifierTests.staleness - .seconds(1))
        #expect(verifier.knownVerdict(on: expiring) == .undecided)
    }

    /// Another token's payload under a cached token's signature is neither the cached token nor
    /// validly signed.
    @Test func aForgedTokenWithACachedSignatureIsRefused() async throws {
        let verifier = loadedVerifier()
        let cached = try await token()
        #expect(await verifier.verdict(on: cached) == .valid(userId: user, appleId: "apple.1", sessionId: session))
        let other = try await token(user: UUID(), session: UUID())
        let otherSignature = try #require(other.lastIndex(of: "."))
        let cachedSignature = try #require(cached.lastIndex(of: "."))
        let forged = String(other[..<otherSignature]) + String(cached[cachedSignature...])
        #expect(forged != cached && forged.hasSuffix(cached[cachedSignature...]))
        #expect(verifier.knownVerdict(on: forged) == nil)
        #expect(await verifier.verdict(on: forged) == .refused)
        #expect(verifier.cachedTokens == 1, "a refused token is not remembered")
    }

    @Test func theVerifierHoldsAtMostItsLimit() async throws {
        let verifier = loadedVerifier(cacheLimit: 4)
        var issued: [String] = []
        for _ in 0..<10 {
            issued.append(try await token(session: UUID()))
            _ = await verifier.verdict(on: issued.last!)
            #expect(verifier.cachedTokens <= 4)
        }
        verifier.useKeys([])
        #expect(await verifier.verdict(on: issued.last!) != .undecided, "the newest token is still held")
    }

    func entry(expiresIn seconds: TimeInterval, from now: Date) -> VerifiedToken {
        VerifiedToken(userId: UUID(), appleId: "apple.1", sessionId: UUID(), issuedAt: now, expiresAt: now.addingTimeInterval(seconds))
    }

    /// More live tokens than the limit: the count never passes it, and the tokens expiring last
    /// (the most recently issued) stay.
    @Test func pastTheLimitTheSoonestToExpireGo() {
        let now = Date()
        var cache = VerifiedTokenCache(limit: 100, leeway: 30)
        var evictedLive = 0
        for index in 0..<1000 {
            evictedLive += cache.insert(entry(expiresIn: 60 + Double(index), from: now), for: TokenDigest(of: "t\(index)"), now: now).live
            #expect(cache.count <= 100)
        }
        #expect(evictedLive == 1000 - cache.count)
        #expect((950..<1000).allSatisfy { cache[TokenDigest(of: "t\($0)")] != nil }, "the newest 50 are all held")
        #expect(cache[TokenDigest(of: "t0")] == nil)
    }

    /// When full, expired entries go first and no live one does while they make room.
    @Test func expiredEntriesMakeRoomBeforeLiveOnes() {
        let now = Date()
        var cache = VerifiedTokenCache(limit: 100, leeway: 30)
        for index in 0..<50 { cache.insert(entry(expiresIn: 600, from: now), for: TokenDigest(of: "live\(index)"), now: now) }
        // Past expiry but within the leeway: still judged (as .expired), so kept.
        for index in 0..<10 { cache.insert(entry(expiresIn: -10, from: now), for: TokenDigest(of: "leeway\(index)"), now: now) }
        for index in 0..<40 { cache.insert(entry(expiresIn: -31, from: now), for: TokenDigest(of: "gone\(index)"), now: now) }
        #expect(cache.count == 100)
        let eviction = cache.insert(entry(expiresIn: 600, from: now), for: TokenDigest(of: "new"), now: now)
        #expect(eviction == VerifiedTokenCache.Eviction(expired: 40, live: 0))
        #expect(cache.count == 61)
        #expect((0..<50).allSatisfy { cache[TokenDigest(of: "live\($0)")] != nil })
        #expect((0..<10).allSatisfy { cache[TokenDigest(of: "leeway\($0)")] != nil })
        // An entry updated in place is not a new one: no room is made for it.
        #expect(cache.update(TokenDigest(of: "new")) { _ in true })
        #expect(!cache.update(TokenDigest(of: "gone0")) { _ in true })
    }

    @Test func theSizeIsASettingAndBadValuesAreRefusedAtStart() throws {
        #expect(try GatewaySettings(environment: EnvironmentReader([:])).sessionCacheEntries == 250_000)
        let set = try GatewaySettings(environment: EnvironmentReader(["GATEWAY_SESSION_CACHE_ENTRIES": "30000"]))
        #expect(set.sessionCacheEntries == 30_000)
        for bad in ["0", "999", "-5", "lots", "10000001"] {
            do {
                _ = try GatewaySettings(environment: EnvironmentReader(["GATEWAY_SESSION_CACHE_ENTRIES": bad]))
                Issue.record("GATEWAY_SESSION_CACHE_ENTRIES=\(bad) was accepted")
            } catch {
                #expect(
                    "\(error)" == #"GATEWAY_SESSION_CACHE_ENTRIES="\#(bad)" is invalid: expected an integer in 1000...10000000"#)
            }
        }
    }

    /// The key is SHA-256 of the token's UTF-8 bytes, all of them: pinned against `sha256sum`.
    @Test func digestsAreOfTheWholeToken() {
        #expect(Hex.string(TokenDigest(of: "a.b.c").sha256) == "845e30448809e2bc8958eb025bfc795235d13b077a53d0c3abbd2385170dc9b8")
        #expect(Hex.string(TokenDigest(of: "").sha256) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(TokenDigest(of: "a.b.c") != TokenDigest(of: "a.x.c"))
        #expect(TokenDigest(of: "") != TokenDigest(of: " "))
    }
}
