import Crypto
import Foundation
import JWTKit
import Testing

@testable import Identity

/// ``SessionTokenVerifier`` (one parse, swift-crypto's Ed25519, the claims through
/// ``TokenCoding``'s decoder) gives the answers of the verifier it replaced, built on jwt-kit's
/// key collection, on the same tokens: Accounts' tokens, and tokens signed with the right key
/// whose header or claims are wrong, forged or misshapen.
@Suite struct SessionTokenVerifierTests {
    let key = Curve25519.Signing.PrivateKey()
    var signing: SessionSigningKey { try! SessionSigningKey(id: "s1", seed: key.rawRepresentation) }
    var verifier: SessionTokenVerifier { SessionTokenVerifier(publicKeys: ["s1": key.publicKey], leeway: 30) }
    let now = Date()

    /// A token signed with `key` (or `signer`) over exactly this header and these claims.
    func signed(header: String, claims: String, signer: Curve25519.Signing.PrivateKey? = nil) throws -> String {
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(claims.utf8))
        return input + "." + Base64URL.encode(try (signer ?? key).signature(for: Data(input.utf8)))
    }

    func claims(iss: String = SessionTokens.issuer, aud: String = "\"\(SessionTokens.audience)\"", iat: Double? = nil, exp: Double? = nil)
        -> String
    {
        let issued = iat ?? now.timeIntervalSince1970.rounded(.down)
        return """
            {"apple_sub":"apple.1","aud":\(aud),"exp":\(exp ?? issued + 900),"iat":\(issued),"iss":"\(iss)",\
            "role":"authenticated","sid":"\(UUID().uuidString.lowercased())","sub":"\(UUID().uuidString.lowercased())"}
            """
    }

    /// The verifier as it was built on jwt-kit (its signature check and claims decoding behind
    /// the key collection's actor, the same rules around them): the oracle.
    func jwtKitVerify(_ token: String) async throws -> SessionClaims {
        let jws = try CompactJWS(parsing: token)
        guard jws.algorithm == "EdDSA" else { throw IdentityError.unsupported(jws.algorithm) }
        guard let kid = jws.header.kid else { throw IdentityError.malformed("missing kid") }
        guard kid == "s1" else { throw IdentityError.unknownKey }
        let publicKey = key.publicKey
        let collection = KeyCollection { collection in
            await collection.add(
                eddsa: EdDSA.PublicKey(backing: publicKey), kid: JWKIdentifier(string: "s1"), parser: TokenCoding.parser,
                serializer: TokenCoding.serializer)
        }
        let claims: SessionClaims
        do {
            claims = try await collection.collection.verify(token, as: SessionClaims.self)
        } catch {
            throw IdentityError.fromJWTKit(error)
        }
        guard claims.iss == SessionTokens.issuer else { throw IdentityError.wrongIssuer }
        guard claims.aud.value.contains(SessionTokens.audience) else { throw IdentityError.wrongAudience }
        try TimeWindow.check(expiresAt: claims.exp.value, issuedAt: claims.iat.value, notBefore: nil, now: now, leeway: 30)
        guard !claims.sub.isEmpty, !claims.sid.isEmpty else { throw IdentityError.malformed("empty sub or sid") }
        return claims
    }

    /// Both verifiers' outcome: the claims, or the error.
    func outcomes(_ token: String) async -> (verifier: String, jwtKit: String) {
        func describe(_ claims: SessionClaims) -> String {
            "\(claims.sub) \(claims.sid) \(claims.appleSub ?? "-") \(claims.issuedAt) \(claims.expiresAt)"
        }
        let ours: String
        do { ours = describe(try await verifier.verify(token, now: now)) } catch { ours = "\(error)" }
        let jwtKit: String
        do { jwtKit = describe(try await jwtKitVerify(token)) } catch { jwtKit = "\(error)" }
        return (ours, jwtKit)
    }

    @Test func accountsTokensGiveTheSameClaims() async throws {
        let tokens = SessionTokens(keys: try SessionKeySet(current: signing))
        for apple in ["apple.1", nil] {
            let token = try await tokens.issue(userID: UUID().uuidString, sessionID: UUID().uuidString, appleSubject: apple, now: now).token
            let both = await outcomes(token)
            #expect(both.verifier == both.jwtKit)
            #expect(try await verifier.verify(token, now: now).appleSub == apple)
        }
    }

    @Test(
        arguments: [
            // Header: another algorithm, no key id, a key not held, a critical extension.
            (#"{"alg":"none","kid":"s1"}"#, nil), (#"{"alg":"HS256","kid":"s1"}"#, nil), (#"{"alg":"EdDSA"}"#, nil),
            (#"{"alg":"EdDSA","kid":"s2"}"#, nil), (#"{"alg":"EdDSA","kid":"s1","crit":["exp"]}"#, nil), (#"{"alg":"EdDSA","kid":7}"#, nil),
            // Claims: issuer, audience (one or several), expired, issued in the future, within the leeway, empty subject, a string time.
            (nil, "iss"), (nil, "aud"), (nil, "audiences"), (nil, "expired"), (nil, "future"), (nil, "leeway"), (nil, "empty"), (nil, "text"),
        ] as [(String?, String?)])
    func wrongHeadersAndClaimsGetTheSameAnswer(header: String?, claim: String?) async throws {
        let header = header ?? #"{"alg":"EdDSA","kid":"s1","typ":"JWT"}"#
        let t = now.timeIntervalSince1970.rounded(.down)
        let body =
            switch claim {
            case "iss": claims(iss: "someone-else")
            case "aud": claims(aud: "\"another-app\"")
            case "audiences": claims(aud: "[\"another-app\",\"\(SessionTokens.audience)\"]")
            case "expired": claims(iat: t - 1000, exp: t - 31)
            case "future": claims(iat: t + 31)
            case "leeway": claims(iat: t + 29, exp: t - 29)
            case "empty": claims().replacingOccurrences(of: #""sub":"[^"]*""#, with: #""sub":"""#, options: .regularExpression)
            case "text": claims().replacingOccurrences(of: #""exp":[0-9.]+"#, with: #""exp":"soon""#, options: .regularExpression)
            default: claims()
            }
        let both = await outcomes(try signed(header: header, claims: body))
        #expect(both.verifier == both.jwtKit)
    }

    @Test func forgedAndMisshapenTokensAreRefusedByBoth() async throws {
        let good = try signed(header: #"{"alg":"EdDSA","kid":"s1"}"#, claims: claims())
        let parts = good.split(separator: ".").map(String.init)
        let otherKey = try signed(header: #"{"alg":"EdDSA","kid":"s1"}"#, claims: claims(), signer: Curve25519.Signing.PrivateKey())
        let variants = [
            otherKey,
            parts[0] + "." + Base64URL.encode(Data(claims().utf8)) + "." + parts[2],  // someone else's claims under this signature
            parts[0] + "." + parts[1] + "." + String(parts[2].dropLast(4)),  // a short signature
            parts[0] + "." + parts[1] + "." + parts[2] + "=",  // padded
            parts[0] + "." + parts[1],  // two segments
            good + "." + parts[2],  // four
            parts[0] + ".." + parts[2],  // an empty payload
            parts[0] + " ." + parts[1] + "." + parts[2],  // outside the alphabet
            String(repeating: "a", count: CompactJWS.defaultMaximumLength) + good,  // too long
        ]
        #expect(await outcomes(good).verifier == (await outcomes(good)).jwtKit)
        for token in variants {
            let both = await outcomes(token)
            #expect(both.verifier == both.jwtKit, "\(token.prefix(80))")
            #expect(
                both.verifier.contains("badSignature") || both.verifier.contains("malformed") || both.verifier.contains("tokenTooLarge"),
                "\(both.verifier)")
        }
    }

    /// What the gateway reads from a token in Accounts' reply to a sign-in or refresh: every rule
    /// but the signature (and so the key, which a newly rotated-in one may not yet be held).
    @Test func aTokenFromAccountsIsReadByEveryRuleButTheSignature() throws {
        let good = try signed(header: #"{"alg":"EdDSA","kid":"s1"}"#, claims: claims())
        let otherKey = try signed(header: #"{"alg":"EdDSA","kid":"s2"}"#, claims: claims(), signer: Curve25519.Signing.PrivateKey())
        let read = try verifier.claims(ofTokenIssuedByAccounts: try CompactJWS(parsing: good), now: now)
        #expect(read == (try verifier.verify(try CompactJWS(parsing: good), now: now)))
        #expect(throws: IdentityError.unknownKey) { try verifier.verify(try CompactJWS(parsing: otherKey), now: now) }
        _ = try verifier.claims(ofTokenIssuedByAccounts: try CompactJWS(parsing: otherKey), now: now)
        let t = now.timeIntervalSince1970.rounded(.down)
        let refused: [(String, String)] = [
            (#"{"alg":"none","kid":"s1"}"#, claims()), (#"{"alg":"HS256","kid":"s1"}"#, claims()), (#"{"alg":"EdDSA"}"#, claims()),
            (#"{"alg":"EdDSA","kid":"s1"}"#, claims(iss: "someone-else")), (#"{"alg":"EdDSA","kid":"s1"}"#, claims(aud: "\"another-app\"")),
            (#"{"alg":"EdDSA","kid":"s1"}"#, claims(iat: t - 1000, exp: t - 31)), (#"{"alg":"EdDSA","kid":"s1"}"#, claims(iat: t + 31)),
            (
                #"{"alg":"EdDSA","kid":"s1"}"#,
                claims().replacingOccurrences(of: #""sid":"[^"]*""#, with: #""sid":"""#, options: .regularExpression)
            ),
        ]
        for (header, body) in refused {
            let token = try signed(header: header, claims: body)
            #expect(throws: IdentityError.self, "\(header) \(body)") {
                try verifier.claims(ofTokenIssuedByAccounts: try CompactJWS(parsing: token), now: now)
            }
        }
    }
}
