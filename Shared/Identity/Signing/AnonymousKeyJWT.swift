import Foundation
import JWTKit

/// HS256 JWTs through jwt-kit, for the gateway's Supabase-style `anon` key: claims `iss`
/// `recruiting-compass`, `role` `anon`, `iat`, no expiry (like Supabase's), signed with a shared
/// secret. HS256 is accepted here and nowhere else, and only with `role` `anon`.
public struct AnonymousKeyJWT: Sendable {
    private let keys: KeyCollection

    /// A key from the shared secret's bytes (the caller enforces its minimum length).
    public init(secret: String) {
        let key = HMACKey(from: Data(secret.utf8))
        // The collection's default key: anon keys carry no `kid`.
        keys = KeyCollection(keepingDefault: true) { collection in
            await collection.add(hmac: key, digestAlgorithm: .sha256, parser: TokenCoding.parser, serializer: TokenCoding.serializer)
        }
    }

    private struct Claims: JWTPayload {
        let iss: String?
        let role: String?
        let iat: IssuedAtClaim?
        let exp: ExpirationClaim?

        /// Checked by ``AnonymousKeyJWT/isValid(_:now:)`` with its clock.
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// A signed anon key issued at `issuedAt`.
    public func issue(issuedAt: Date = Date()) async throws -> String {
        let claims = Claims(iss: "recruiting-compass", role: "anon", iat: IssuedAtClaim(value: TokenCoding.wholeSeconds(issuedAt)), exp: nil)
        return try await keys.collection.sign(claims)
    }

    /// Whether `token` is an HS256 JWT signed with this secret, with `role` `anon` and not past
    /// an `exp` it may carry.
    public func isValid(_ token: String, now: Date = Date()) async -> Bool {
        guard let jws = try? CompactJWS(parsing: token), jws.algorithm == "HS256" else { return false }
        guard let claims = try? await keys.collection.verify(token, as: Claims.self), claims.role == "anon" else { return false }
        if let exp = claims.exp, exp.value < now { return false }
        return true
    }
}
