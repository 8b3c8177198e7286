import Crypto
import Foundation
import Identity

/// The Supabase-style `anon` key: a JWT (HS256) with `role` `anon`, signed with
/// `GATEWAY_JWT_SECRET`. Supabase clients insist on sending a key (`apikey` header and, with no
/// user signed in, `Authorization: Bearer`); this one grants public reads only.
///
/// HS256 is accepted here and nowhere else, and only with `role` `anon`: a token of another role
/// or algorithm never passes as this key, and session tokens (EdDSA) are told apart by their
/// header before any check.
public struct AnonymousKey: Sendable {
    let secret: SymmetricKey

    public init?(secret: String) {
        guard secret.utf8.count >= 32 else { return nil }
        self.secret = SymmetricKey(data: Data(secret.utf8))
    }

    /// The key to hand to clients (`Gateway --print-anon-key`): no expiry, like Supabase's.
    public func issue(issuedAt: Date = Date()) -> String {
        let header = Base64URL.encode(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = Base64URL.encode(Data(#"{"iss":"recruiting-compass","role":"anon","iat":\#(Int(issuedAt.timeIntervalSince1970))}"#.utf8))
        let input = header + "." + payload
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: secret)
        return input + "." + Base64URL.encode(Data(mac))
    }

    /// Whether `token` is an anon key signed with this secret.
    func isValid(_ token: String) -> Bool {
        guard let jws = try? CompactJWS(parsing: token), jws.header.alg == "HS256",
            HMAC<SHA256>.isValidAuthenticationCode(jws.signature, authenticating: jws.signingInput, using: secret)
        else { return false }
        struct Claims: Decodable {
            let role: String?
            let exp: Double?
        }
        guard let claims = try? JSONDecoder().decode(Claims.self, from: jws.payload), claims.role == "anon" else { return false }
        if let exp = claims.exp, exp < Date().timeIntervalSince1970 { return false }
        return true
    }
}
