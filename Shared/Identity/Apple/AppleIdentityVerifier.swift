import Crypto
import Foundation
import Hex
import Logging

/// Verifies Sign in with Apple identity tokens (RS256 JWTs signed by Apple), through jwt-kit.
///
/// Checks, in order: size and shape (``CompactJWS``), `alg` is exactly `RS256` (so `none`,
/// `HS256` and every other algorithm are refused before any key is touched), the `kid` is in
/// Apple's key set (``AppleKeyCache``), the PKCS#1 v1.5 SHA-256 signature (jwt-kit, with the key
/// that `kid` names), then the claims: `iss` is `https://appleid.apple.com`, `aud`
/// (string or array) names one of the configured client ids, `exp`/`iat`/`nbf` within the leeway,
/// a non-empty `sub`, and the nonce when the caller passes one.
///
/// **Nonce.** The app makes a random nonce, usually gives Apple its SHA-256 (lowercase hex), and
/// sends us the raw value. So a caller's nonce matches when the token's `nonce` equals either the
/// SHA-256 hex of it (the recommended flow) or the value itself (an app that gave Apple the raw
/// nonce, or a caller that passes on the hash it has). A token without `nonce` never matches a
/// caller's nonce. Without a caller nonce, the token's nonce is not checked.
public struct AppleIdentityVerifier: Sendable {
    public static let issuer = "https://appleid.apple.com"

    public let audiences: Set<String>
    public let leeway: TimeInterval
    private let keys: AppleKeyCache
    private let logger: Logger

    /// - Parameters:
    ///   - audiences: the app's bundle id (and a Services ID when web sign-in is used).
    ///   - leeway: seconds of clock skew tolerated on `exp`, `iat` and `nbf`.
    public init(audiences: Set<String>, keys: AppleKeyCache, leeway: TimeInterval = 60, logger: Logger) {
        self.audiences = audiences
        self.keys = keys
        self.leeway = leeway
        self.logger = logger
    }

    /// The claims of `token` when it is a valid identity token for this app; else throws
    /// ``IdentityError``.
    public func verify(_ token: String, nonce: String? = nil, now: Date = Date()) async throws -> AppleIdentityClaims {
        do {
            return try await verifyUnlogged(token, nonce: nonce, now: now)
        } catch let error as IdentityError {
            // The reason only: never the token or its claims.
            logger.debug("apple identity token refused", metadata: ["reason": "\(error)"])
            throw error
        }
    }

    private func verifyUnlogged(_ token: String, nonce: String?, now: Date) async throws -> AppleIdentityClaims {
        let jws = try CompactJWS(parsing: token)
        guard jws.algorithm == "RS256" else { throw IdentityError.unsupported(jws.algorithm) }
        guard let kid = jws.header.kid, !kid.isEmpty else { throw IdentityError.malformed("missing kid") }
        let collection = try await keys.keys(containing: kid)
        let wire: AppleWireClaims
        do {
            wire = try await collection.verify(token, as: AppleWireClaims.self)
        } catch {
            throw IdentityError.fromJWTKit(error)
        }
        guard wire.iss == Self.issuer else { throw IdentityError.wrongIssuer }
        guard wire.aud.value.contains(where: audiences.contains) else { throw IdentityError.wrongAudience }
        try TimeWindow.check(expiresAt: wire.exp.value, issuedAt: wire.iat.value, notBefore: wire.nbf?.value, now: now, leeway: leeway)
        guard !wire.sub.isEmpty else { throw IdentityError.malformed("empty sub") }
        if let nonce {
            guard let tokenNonce = wire.nonce, Self.nonce(tokenNonce, matches: nonce) else {
                throw IdentityError.nonceMismatch
            }
        }
        return wire.claims
    }

    /// Whether the token's nonce is `expected` or the SHA-256 hex of `expected`.
    static func nonce(_ tokenNonce: String, matches expected: String) -> Bool {
        let hashed = Hex.string(SHA256.hash(data: Data(expected.utf8)))
        return constantTimeEquals(tokenNonce.utf8, hashed.utf8) || constantTimeEquals(tokenNonce.utf8, expected.utf8)
    }
}
