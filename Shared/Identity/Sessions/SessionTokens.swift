import Crypto
import Foundation
import JWTKit

/// The claims of our session token (jwt-kit payload; names and JSON as they always were).
public struct SessionClaims: JWTPayload, Equatable {
    /// User id.
    public let sub: String
    /// Session id: what refresh and sign-out act on, and what revocation lists name.
    public let sid: String
    public let iss: String
    public let aud: AudienceClaim
    public let iat: IssuedAtClaim
    public let exp: ExpirationClaim
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
    public var issuedAt: Date { iat.value }
    public var expiresAt: Date { exp.value }

    /// Empty: ``SessionTokenVerifier`` checks issuer, audience and times with its own clock and
    /// leeway after jwt-kit has checked the signature.
    public func verify(using algorithm: some JWTAlgorithm) throws {}
}

/// Issues and verifies our short-lived session tokens: JWTs signed with Ed25519 (`EdDSA`) through
/// jwt-kit.
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
    /// The current key as jwt-kit's signer, and the verifier over every listed public key.
    private let signing: KeyCollection
    public let verifier: SessionTokenVerifier

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
        let current = keys.current
        signing = KeyCollection { collection in
            await collection.add(
                eddsa: EdDSA.PrivateKey(backing: current.privateKey), kid: JWKIdentifier(string: current.id),
                parser: TokenCoding.parser, serializer: TokenCoding.serializer)
        }
        var publicKeys = keys.previous
        publicKeys[current.id] = current.publicKey
        verifier = SessionTokenVerifier(publicKeys: publicKeys, leeway: leeway, issuer: issuer, audience: audience)
    }

    /// A signed token for `userID`'s session `sessionID`, and its claims.
    public func issue(userID: String, sessionID: String, appleSubject: String? = nil, now: Date = Date()) async throws
        -> (token: String, claims: SessionClaims)
    {
        let issuedAt = TokenCoding.wholeSeconds(now)
        let claims = SessionClaims(
            sub: userID, sid: sessionID, iss: issuer, aud: AudienceClaim(value: [audience]), iat: IssuedAtClaim(value: issuedAt),
            exp: ExpirationClaim(value: issuedAt.addingTimeInterval(lifetime)), appleSub: appleSubject, role: "authenticated")
        let token = try await signing.collection.sign(claims, kid: JWKIdentifier(string: keys.current.id), header: ["typ": "JWT"])
        return (token, claims)
    }

    /// The claims of `token` when we signed it with a listed key and it is still valid.
    public func verify(_ token: String, now: Date = Date()) async throws -> SessionClaims {
        try await verifier.verify(token, now: now)
    }
}

/// Checks session tokens with public keys only: what the gateway runs, holding Accounts' public
/// keys (`accounts.public_keys`) but never a signing key, and what Accounts runs on a token it is
/// shown. The one home of these rules.
///
/// ``CompactJWS`` checks the shape first; the header must name `EdDSA` and a `kid` we hold (so
/// `none`, `HS256` and anything else are refused before any key is touched, and no other key is
/// ever tried); then the Ed25519 signature over the token's own bytes (swift-crypto, the signer
/// jwt-kit calls); the claims are decoded with ``TokenCoding``'s decoder (jwt-kit's parser);
/// issuer, audience and times are checked last. Synchronous, on the caller's one parse: a token
/// the gateway had not seen was parsed three times on its way here (its `alg`, this check, then
/// jwt-kit's own parse behind its key collection's actor), about a tenth of the gateway's CPU in
/// round 1 of `deploy/bench-gateway`. `SessionTokenVerifierTests` hold it to jwt-kit's answers.
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
    public func verify(_ token: String, now: Date = Date()) async throws -> SessionClaims {
        try verify(CompactJWS(parsing: token), now: now)
    }

    /// The claims of the token parsed as `jws` when one of ``publicKeys`` signed it and it is
    /// still valid; else the ``IdentityError`` that says why not.
    public func verify(_ jws: CompactJWS, now: Date = Date()) throws -> SessionClaims {
        guard let key = publicKeys[try keyID(of: jws)] else { throw IdentityError.unknownKey }
        guard key.isValidSignature(jws.signature, for: jws.signingInput) else { throw IdentityError.badSignature }
        return try checkedClaims(of: jws, now: now)
    }

    /// The claims of a token that Accounts itself handed to the caller, read **without checking
    /// its signature**: for the gateway relaying a sign-in or refresh, which received the token in
    /// Accounts' reply over the bus, from the service whose word it already takes on any token
    /// (`accounts.verify_session`). The signature would only prove again that Accounts signed it.
    /// Every other rule holds (`EdDSA`, a `kid`, issuer, audience, times, `sub` and `sid`), so a
    /// reply that is not a live session token of ours is refused. Never for a token a client sent.
    public func claims(ofTokenIssuedByAccounts jws: CompactJWS, now: Date = Date()) throws -> SessionClaims {
        _ = try keyID(of: jws)
        return try checkedClaims(of: jws, now: now)
    }

    /// The `kid` of a session token's header, which must name `EdDSA`: the header's rules, in one
    /// place for both entries.
    private func keyID(of jws: CompactJWS) throws -> String {
        guard jws.algorithm == "EdDSA" else { throw IdentityError.unsupported(jws.algorithm) }
        guard let kid = jws.header.kid else { throw IdentityError.malformed("missing kid") }
        return kid
    }

    /// The claims of `jws` when they name our issuer and audience, are within their times and
    /// name a user and a session: the rules after the signature, in one place for both entries.
    private func checkedClaims(of jws: CompactJWS, now: Date) throws -> SessionClaims {
        let claims: SessionClaims
        do {
            claims = try TokenCoding.claimsDecoder.decode(SessionClaims.self, from: jws.payload)
        } catch {
            throw IdentityError.malformed("invalid claims")
        }
        guard claims.iss == issuer else { throw IdentityError.wrongIssuer }
        guard claims.aud.value.contains(audience) else { throw IdentityError.wrongAudience }
        try TimeWindow.check(expiresAt: claims.exp.value, issuedAt: claims.iat.value, notBefore: nil, now: now, leeway: leeway)
        guard !claims.sub.isEmpty, !claims.sid.isEmpty else { throw IdentityError.malformed("empty sub or sid") }
        return claims
    }
}
