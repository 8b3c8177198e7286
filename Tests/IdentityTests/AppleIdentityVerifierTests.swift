import Crypto
import Foundation
import Identity
import Testing

/// Sign in with Apple identity tokens against a key set written to a file, as Apple's would be.
@Suite final class AppleIdentityVerifierTests: Sendable {
    let directory: TemporaryDirectory
    let jwksPath: String
    let verifier: AppleIdentityVerifier

    init() throws {
        directory = try TemporaryDirectory()
        jwksPath = directory.file("apple-keys.json")
        try AppleFixture.writeJWKS([("A", AppleFixture.keyA)], to: jwksPath)
        verifier = AppleFixture.verifier(jwksPath: jwksPath)
    }

    deinit { directory.remove() }

    func verify(_ token: String, nonce: String? = nil, now: Date = Date()) async throws -> IdentityError? {
        return try await thrownAsync { try await verifier.verify(token, nonce: nonce, now: now) }
    }

    func claims(_ change: (inout [String: Any]) -> Void) -> [String: Any] {
        var claims = AppleFixture.claims()
        change(&claims)
        return claims
    }

    @Test func validTokenGivesItsClaims() async throws {
        let now = Date()
        let claims = try await verifier.verify(try AppleFixture.token(claims: AppleFixture.claims(now: now)), now: now)
        #expect(claims.subject == "001234.abcdef0123456789.0042")
        #expect(claims.email == "x7q2@privaterelay.appleid.com")
        #expect(claims.emailVerified == true)  // sent as the string "true"
        #expect(claims.isPrivateEmail == true)  // sent as a JSON boolean
        #expect(claims.authTime == Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down)))
        #expect(claims.expiresAt.timeIntervalSince(claims.issuedAt) == 600)
    }

    @Test func booleansAsStringsOrBoolsAndAbsentEmail() async throws {
        let token = try AppleFixture.token(
            claims: claims {
                $0["email_verified"] = false
                $0["is_private_email"] = "false"
            })
        let claims = try await verifier.verify(token)
        #expect(claims.emailVerified == false)
        #expect(claims.isPrivateEmail == false)

        let withoutEmail = try AppleFixture.token(
            claims: self.claims {
                $0["email"] = nil
                $0["email_verified"] = nil
                $0["is_private_email"] = nil
            })
        let bare = try await verifier.verify(withoutEmail)
        #expect(bare.email == nil && bare.emailVerified == nil && bare.isPrivateEmail == nil)
    }

    @Test func signatureByAnotherKeyIsRefused() async throws {
        #expect(try await verify(try AppleFixture.token(kid: "A", key: AppleFixture.keyB)) == .badSignature)
    }

    @Test func tamperedPayloadIsRefused() async throws {
        let token = try AppleFixture.token()
        let forged = try AppleFixture.token(claims: claims { $0["sub"] = "someone-else" }, key: AppleFixture.keyB)
        let forgedPayload = String(forged.split(separator: ".")[1])
        #expect(try await verify(replacingSegment(1, of: token, with: forgedPayload)) == .badSignature)
    }

    @Test func wrongAudienceAsStringOrArrayIsRefused() async throws {
        #expect(try await verify(try AppleFixture.token(claims: claims { $0["aud"] = "com.other.app" })) == .wrongAudience)
        let array = try AppleFixture.token(claims: claims { $0["aud"] = ["com.other.app", "com.third.app"] })
        #expect(try await verify(array) == .wrongAudience)
    }

    @Test func audienceArrayNamingUsIsAccepted() async throws {
        let token = try AppleFixture.token(claims: claims { $0["aud"] = ["com.other.app", AppleFixture.bundleID] })
        #expect(try await verify(token) == nil)
    }

    @Test func expiredTokenIsRefusedOutsideTheLeeway() async throws {
        let token = try AppleFixture.token()
        let issued = Date()
        #expect(try await verify(token, now: issued.addingTimeInterval(600 + 61)) == .expired)
        #expect(try await verify(token, now: issued.addingTimeInterval(600 + 30)) == nil)
    }

    @Test func tokenIssuedInTheFutureIsRefused() async throws {
        let token = try AppleFixture.token(claims: AppleFixture.claims(now: Date().addingTimeInterval(300)))
        #expect(try await verify(token) == .notYetValid)
    }

    @Test func notBeforeInTheFutureIsRefused() async throws {
        let token = try AppleFixture.token(claims: claims { $0["nbf"] = Int(Date().timeIntervalSince1970) + 300 })
        #expect(try await verify(token) == .notYetValid)
    }

    @Test func wrongIssuerIsRefused() async throws {
        let token = try AppleFixture.token(claims: claims { $0["iss"] = "https://evil.example" })
        #expect(try await verify(token) == .wrongIssuer)
    }

    @Test func missingRequiredClaimIsMalformed() async throws {
        let token = try AppleFixture.token(claims: claims { $0["sub"] = nil })
        #expect(try await verify(token)?.isMalformed == true)
    }

    @Test func nonceMatchesTheRawValueThroughItsHash() async throws {
        // The token carries SHA-256 hex of the raw nonce (the recommended app flow).
        #expect(try await verify(try AppleFixture.token(), nonce: AppleFixture.rawNonce) == nil)
    }

    @Test func nonceMatchesWhenTheTokenHoldsTheRawValue() async throws {
        let token = try AppleFixture.token(claims: claims { $0["nonce"] = AppleFixture.rawNonce })
        #expect(try await verify(token, nonce: AppleFixture.rawNonce) == nil)
    }

    @Test func nonceMismatchIsRefused() async throws {
        #expect(try await verify(try AppleFixture.token(), nonce: "another-nonce") == .nonceMismatch)
    }

    @Test func tokenWithoutNonceFailsWhenTheCallerExpectsOne() async throws {
        let token = try AppleFixture.token(claims: claims { $0["nonce"] = nil })
        #expect(try await verify(token, nonce: AppleFixture.rawNonce) == .nonceMismatch)
    }

    @Test func algNoneIsRefused() async throws {
        let unsigned = try compactJWS(header: ["alg": "none", "kid": "A"], claims: AppleFixture.claims()) { _ in Data() }
        #expect(try await verify(unsigned)?.isMalformed == true)  // empty signature segment
        let withJunk = try compactJWS(header: ["alg": "none", "kid": "A"], claims: AppleFixture.claims()) { _ in Data([1]) }
        #expect(try await verify(withJunk) == .unsupportedAlgorithm("none"))
    }

    @Test func hs256KeyConfusionIsRefused() async throws {
        // The classic attack: HMAC with the RSA public key's bytes as the secret.
        let secret = SymmetricKey(data: try AppleFixture.keyA.publicKey.getKeyPrimitives().modulus)
        let token = try compactJWS(header: ["alg": "HS256", "kid": "A"], claims: AppleFixture.claims()) {
            Data(HMAC<SHA256>.authenticationCode(for: $0, using: secret))
        }
        #expect(try await verify(token) == .unsupportedAlgorithm("HS256"))
    }

    @Test func missingKidIsMalformed() async throws {
        let token = try compactJWS(header: ["alg": "RS256"], claims: AppleFixture.claims()) { _ in Data([1]) }
        #expect(try await verify(token)?.isMalformed == true)
    }
}
