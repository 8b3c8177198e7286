import Crypto
import Foundation
import Logging

/// The claims of our session token.
public struct SessionClaims: Sendable, Equatable, Codable {
    /// User id.
    public let sub: String
    /// Session id: what refresh and sign-out act on, and what revocation lists name.
    public let sid: String
    public let iss: String
    public let aud: Audience
    public let iat: NumericDate
    public let exp: NumericDate
    /// The Apple subject the session was opened for, so a gateway verifying the token itself
    /// knows the caller's Apple id without asking Accounts. Absent from tokens issued before it
    /// was added; such a token is verified by Accounts.
    public let appleSub: String?
    /// `authenticated`, as in a Supabase Auth access token, so Supabase clients that read the
    /// token's claims see a signed-in user. Informational: verification does not depend on it.
    public let role: String?

    enum CodingKeys: String, CodingKey {
        case sub, sid, iss, aud, iat, exp, role
        case appleSub = "apple_sub"
    }

    public var userID: String { sub }
    public var sessionID: String { sid }
    public var expiresAt: Date { exp.date }
}

/// Issues and verifies our short-lived session tokens: JWTs signed with Ed25519 (`EdDSA`).
///
/// Tokens are self-contained so the gateway can verify them without a call to Accounts; that is
/// why they are short-lived (15 minutes by default): a revoked session stops working when its token
/// expires, and the app renews it with its refresh token. The header carries `kid`, so keys rotate
/// through ``SessionKeySet`` without signing anyone out.
public struct SessionTokens: Sendable {
    public static let issuer = "recruiting-compass"
    public static let audience = "recruiting-compass-app"

    public let keys: SessionKeySet
    public let lifetime: TimeInterval
    public let leeway: TimeInterval
    public let issuer: String
    public let audience: String

    /// - Parameters:
    ///   - lifetime: seconds from issue to `exp`.
    ///   - leeway: seconds of clock skew tolerated on `exp` and `iat`.
    public init(
        keys: SessionKeySet, lifetime: TimeInterval = 15 * 60, leeway: TimeInterval = 30,
        issuer: String = SessionTokens.issuer, audience: String = SessionTokens.audience
    ) {
        self.keys = keys
        self.lifetime = lifetime
        self.leeway = leeway
        self.issuer = issuer
        self.audience = audience
    }

    private struct Header: Encodable {
        let alg = "EdDSA"
        let typ = "JWT"
        let kid: String
    }

    /// A signed token for `userID`'s session `sessionID`, and its claims.
    public func issue(userID: String, sessionID: String, appleSubject: String? = nil, now: Date = Date()) throws
        -> (token: String, claims: SessionClaims)
    {
        let issuedAt = NumericDate(now)
        let claims = SessionClaims(
            sub: userID, sid: sessionID, iss: issuer, aud: Audience([audience]), iat: issuedAt,
            exp: NumericDate(issuedAt.date.addingTimeInterval(lifetime)), appleSub: appleSubject, role: "authenticated")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let header = try encoder.encode(Header(kid: keys.current.id))
        let payload = try encoder.encode(claims)
        let key = keys.current.privateKey
        let token = try CompactJWS.serialize(header: header, payload: payload) { try key.signature(for: $0) }
        return (token, claims)
    }

    /// The claims of `token` when we signed it with a listed key and it is still valid.
    public func verify(_ token: String, now: Date = Date()) throws -> SessionClaims {
        try verifier.verify(token, now: now)
    }

    /// A verifier that holds only the public keys, for whoever checks tokens without issuing them.
    public var verifier: SessionTokenVerifier {
        var keys = keys.previous
        keys[self.keys.current.id] = self.keys.current.publicKey
        return SessionTokenVerifier(publicKeys: keys, leeway: leeway, issuer: issuer, audience: audience)
    }
}

/// Checks session tokens with public keys only: what the gateway runs, holding Accounts' public
/// keys (`accounts.public_keys`) but never a signing key.
public struct SessionTokenVerifier: Sendable {
    public let publicKeys: [String: Curve25519.Signing.PublicKey]
    public let leeway: TimeInterval
    public let issuer: String
    public let audience: String

    public init(
        publicKeys: [String: Curve25519.Signing.PublicKey], leeway: TimeInterval = 30,
        issuer: String = SessionTokens.issuer, audience: String = SessionTokens.audience
    ) {
        self.publicKeys = publicKeys
        self.leeway = leeway
        self.issuer = issuer
        self.audience = audience
    }

    /// The claims of `token` when one of ``publicKeys`` signed it and it is still valid.
    public func verify(_ token: String, now: Date = Date()) throws -> SessionClaims {
        let jws = try CompactJWS(parsing: token)
        guard jws.header.alg == "EdDSA" else { throw IdentityError.unsupported(jws.header.alg) }
        guard let kid = jws.header.kid else { throw IdentityError.malformed("missing kid") }
        guard let key = publicKeys[kid] else { throw IdentityError.unknownKey }
        guard key.isValidSignature(jws.signature, for: jws.signingInput) else { throw IdentityError.badSignature }
        let claims: SessionClaims
        do {
            claims = try JSONDecoder().decode(SessionClaims.self, from: jws.payload)
        } catch {
            throw IdentityError.malformed("invalid claims")
        }
        guard claims.iss == issuer else { throw IdentityError.wrongIssuer }
        guard claims.aud.contains(anyOf: [audience]) else { throw IdentityError.wrongAudience }
        try TimeWindow.check(expiresAt: claims.exp, issuedAt: claims.iat, notBefore: nil, now: now, leeway: leeway)
        guard !claims.sub.isEmpty, !claims.sid.isEmpty else { throw IdentityError.malformed("empty sub or sid") }
        return claims
    }
}
