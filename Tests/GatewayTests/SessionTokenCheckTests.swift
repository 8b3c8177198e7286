import Crypto
import Foundation
import Identity
import Testing

@testable import GatewayService

/// The gateway's own session-token check (``BearerJWS`` + ``SessionTokenCheck``) gives the answers
/// of Identity's jwt-kit `SessionTokenVerifier` on the same tokens: Accounts' tokens, and tokens
/// signed with the right key whose header or claims are wrong.
@Suite struct SessionTokenCheckTests {
    let key = Curve25519.Signing.PrivateKey()
    var signing: SessionSigningKey { try! SessionSigningKey(id: "s1", seed: key.rawRepresentation) }
    var check: SessionTokenCheck { SessionTokenCheck(publicKeys: ["s1": key.publicKey], leeway: 30) }
    var reference: SessionTokenVerifier { SessionTokenVerifier(publicKeys: ["s1": key.publicKey], leeway: 30) }
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

    /// Both checks' outcome: the claims the gateway reads, or the error.
    func outcomes(_ token: String) async -> (gateway: String, jwtKit: String) {
        let gateway: String
        if let jws = BearerJWS(token) {
            do {
                let claims = try check.verify(jws, now: now)
                gateway = "\(claims.sub) \(claims.sid) \(claims.appleSub ?? "-") \(claims.issuedAt) \(claims.expiresAt)"
            } catch { gateway = "\(error)" }
        } else {
            gateway = "\(IdentityError.malformed("not a compact JWS"))"
        }
        let jwtKit: String
        do {
            let claims = try await reference.verify(token, now: now)
            jwtKit = "\(claims.sub) \(claims.sid) \(claims.appleSub ?? "-") \(claims.issuedAt) \(claims.expiresAt)"
        } catch let error as IdentityError {
            // What `CompactJWS` refuses for the token's shape, the gateway refuses as one.
            var shape = false
            if case .malformed(let why) = error { shape = !["missing kid", "empty sub or sid", "invalid claims"].contains(why) }
            if case .tokenTooLarge = error { shape = true }
            jwtKit = shape ? "\(IdentityError.malformed("not a compact JWS"))" : "\(error)"
        } catch { jwtKit = "\(error)" }
        return (gateway, jwtKit)
    }

    @Test func accountsTokensGiveTheSameClaims() async throws {
        let tokens = SessionTokens(keys: try SessionKeySet(current: signing))
        for apple in ["apple.1", nil] {
            let token = try await tokens.issue(userID: UUID().uuidString, sessionID: UUID().uuidString, appleSubject: apple, now: now).token
            let both = await outcomes(token)
            #expect(both.gateway == both.jwtKit)
            #expect(try check.verify(try #require(BearerJWS(token)), now: now).appleSub == apple)
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
        #expect(both.gateway == both.jwtKit)
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
        #expect(await outcomes(good).gateway == (await outcomes(good)).jwtKit)
        for token in variants {
            let both = await outcomes(token)
            #expect(both.gateway == both.jwtKit, "\(token.prefix(80))")
            #expect(both.gateway.contains("badSignature") || both.gateway.contains("malformed") || both.gateway.contains("tooLarge"))
        }
    }
}
