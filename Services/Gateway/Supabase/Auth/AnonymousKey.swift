import Bus
import Foundation
import GatewayService
import Identity

/// The Supabase-style `anon` key: a JWT (HS256) with `role` `anon`, signed with
/// `GATEWAY_JWT_SECRET` (Identity's ``AnonymousKeyJWT``, on jwt-kit). Supabase clients insist on
/// sending a key (`apikey` header and, with no user signed in, `Authorization: Bearer`); this one
/// grants public reads only.
///
/// HS256 is accepted here and nowhere else, and only with `role` `anon`: a token of another role
/// or algorithm never passes as this key, and session tokens (EdDSA) are told apart by their
/// header before any check.
public struct AnonymousKey: TokenKind {
    private let jwt: AnonymousKeyJWT

    /// The shortest HMAC secret accepted, in bytes (`compass keys generate` makes 43).
    public static let minimumSecretBytes = 32

    public init?(secret: String) {
        guard secret.utf8.count >= Self.minimumSecretBytes else { return nil }
        jwt = AnonymousKeyJWT(secret: secret)
    }

    /// The key to hand to clients (`Gateway --print-anon-key`): no expiry, like Supabase's.
    public func issue(issuedAt: Date = Date()) async throws -> String {
        try await jwt.issue(issuedAt: issuedAt)
    }

    /// Whether `token` is an anon key signed with this secret.
    func isValid(_ token: String) async -> Bool {
        await jwt.isValid(token)
    }

    package var algorithm: String { "HS256" }

    /// The anon key reads what anyone may read: ``Credential/apiKey``.
    package func credential(for token: String) async throws -> Credential {
        guard await isValid(token) else { throw BusError(.unauthenticated, "the key is not valid") }
        return .apiKey
    }
}
