import Crypto
import Foundation
import Identity
import JWTKit
import Testing

/// Our own Ed25519 session tokens: round trip, time, audience, rotation, tampering.
@Suite struct SessionTokenTests {
    let keyOne: SessionSigningKey
    let keyTwo: SessionSigningKey

    init() throws {
        keyOne = try SessionSigningKey.generate(id: "2026-11-a")
        keyTwo = try SessionSigningKey.generate(id: "2026-11-b")
    }

    func tokens(_ current: SessionSigningKey, previous: [SessionSigningKey] = [], audience: String = SessionTokens.audience) throws -> SessionTokens {
        let keys = try SessionKeySet(current: current, previous: Dictionary(uniqueKeysWithValues: previous.map { ($0.id, $0.publicKey) }))
        return SessionTokens(keys: keys, audience: audience)
    }

    @Test func roundTrip() async throws {
        let sessions = try tokens(keyOne)
        let now = Date()
        let (token, issued) = try await sessions.issue(userID: "user-42", sessionID: "session-7", now: now)
        let claims = try await sessions.verify(token, now: now)
        #expect(claims == issued)
        #expect(claims.userID == "user-42" && claims.sessionID == "session-7")
        #expect(claims.iss == "recruiting-compass" && claims.aud == AudienceClaim(value: ["recruiting-compass-app"]))
        #expect(claims.expiresAt.timeIntervalSince(claims.issuedAt) == 15 * 60)
        let header = try CompactJWS(parsing: token).header
        #expect(header.alg == "EdDSA" && header.kid == "2026-11-a" && header.typ == "JWT")
    }

    @Test func expiredTokenIsRefused() async throws {
        let sessions = try tokens(keyOne)
        let now = Date()
        let (token, _) = try await sessions.issue(userID: "u", sessionID: "s", now: now)
        #expect(try await thrownAsync { try await sessions.verify(token, now: now.addingTimeInterval(15 * 60 + 31)) } == .expired)
        #expect(try await thrownAsync { try await sessions.verify(token, now: now.addingTimeInterval(15 * 60 + 29)) } == nil)
        #expect(try await thrownAsync { try await sessions.verify(token, now: now.addingTimeInterval(-120)) } == .notYetValid)
    }

    @Test func wrongAudienceOrIssuerIsRefused() async throws {
        let (forOther, _) = try await tokens(keyOne, audience: "another-app").issue(userID: "u", sessionID: "s")
        #expect(try await thrownAsync { try await tokens(keyOne).verify(forOther) } == .wrongAudience)
        let keys = try SessionKeySet(current: keyOne)
        let (otherIssuer, _) = try await SessionTokens(keys: keys, issuer: "someone-else").issue(userID: "u", sessionID: "s")
        #expect(try await thrownAsync { try await SessionTokens(keys: keys).verify(otherIssuer) } == .wrongIssuer)
    }

    @Test func rotationKeepsPreviousKeysVerifyingUntilRemoved() async throws {
        let (oldToken, _) = try await tokens(keyOne).issue(userID: "u", sessionID: "s")
        let rotated = try tokens(keyTwo, previous: [keyOne])
        #expect(try await rotated.verify(oldToken).userID == "u")
        let (newToken, _) = try await rotated.issue(userID: "u", sessionID: "s")
        #expect(try CompactJWS(parsing: newToken).header.kid == "2026-11-b")
        #expect(try await rotated.verify(newToken).sessionID == "s")
        #expect(try await thrownAsync { try await tokens(keyTwo).verify(oldToken) } == .unknownKey)
    }

    @Test func tamperingIsRefused() async throws {
        let sessions = try tokens(keyOne)
        let (token, _) = try await sessions.issue(userID: "user-42", sessionID: "s")
        let (other, _) = try await sessions.issue(userID: "admin", sessionID: "s")
        let swapped = replacingSegment(1, of: token, with: String(other.split(separator: ".")[1]))
        #expect(try await thrownAsync { try await sessions.verify(swapped) } == .badSignature)

        // Same kid, signed by a key we never listed.
        let impostor = try SessionSigningKey.generate(id: keyOne.id)
        let (forged, _) = try await tokens(impostor).issue(userID: "user-42", sessionID: "s")
        #expect(try await thrownAsync { try await sessions.verify(forged) } == .badSignature)
    }

    @Test func otherAlgorithmsAreRefused() async throws {
        let sessions = try tokens(keyOne)
        let (token, _) = try await sessions.issue(userID: "u", sessionID: "s")
        for alg in ["none", "HS256", "RS256"] {
            let header = Base64URL.encode(Data("{\"alg\":\"\(alg)\",\"kid\":\"\(keyOne.id)\"}".utf8))
            #expect(try await thrownAsync { try await sessions.verify(replacingSegment(0, of: token, with: header)) } == .unsupportedAlgorithm(alg))
        }
    }

    @Test func keysFromConfiguration() async throws {
        let seed = Curve25519.Signing.PrivateKey().rawRepresentation
        let old = Curve25519.Signing.PrivateKey().publicKey.rawRepresentation
        let keys = try SessionKeySet(
            currentConfiguration: "k2=\(seed.base64EncodedString())", previousConfiguration: "k1=\(old.base64EncodedString())")
        #expect(keys.current.id == "k2" && keys.previous.keys.sorted() == ["k1"])
        #expect(
            try thrown { try SessionKeySet(currentConfiguration: "k2=AAAA") } == .invalidKey("session signing key must be a 32-byte Ed25519 seed"))
        #expect(try thrown { try SessionKeySet(currentConfiguration: "bad id=\(seed.base64EncodedString())") } != nil)
        #expect(!"\(keys.current)".contains(seed.base64EncodedString()))
    }
}

/// Refresh tokens: random, and stored only as a hash.
@Suite struct RefreshTokenTests {
    @Test func generatedTokenAndItsHash() {
        let first = RefreshToken.generate()
        let second = RefreshToken.generate()
        #expect(first.token != second.token)
        #expect(first.token.utf8.count == 43 && Base64URL.decode(first.token)?.count == 32)
        let expected = SHA256.hash(data: Data(first.token.utf8)).map { String(format: "%02x", $0) }.joined()
        #expect(first.hash == expected)
        #expect(RefreshToken.hash(of: first.token) == first.hash)
        #expect(!"\(first)".contains(first.token))
    }
}
