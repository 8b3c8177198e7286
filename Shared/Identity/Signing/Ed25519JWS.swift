import Crypto
import Foundation

/// Compact JWS signed with Ed25519 (`alg` EdDSA) over any payload: what signed documents other
/// than session tokens use (Accounts' deletion certificates). The header carries `kid` and `typ`
/// so a verifier picks the key and refuses a token of another kind (a session token is never a
/// certificate, and the other way round).
public enum Ed25519JWS {
    private struct Header: Encodable {
        let alg = "EdDSA"
        let typ: String
        let kid: String
    }

    /// `header.payload.signature` over `payload` exactly as given.
    public static func sign(payload: Data, type: String, key: SessionSigningKey) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let header = try encoder.encode(Header(typ: type, kid: key.id))
        let privateKey = key.privateKey
        return try CompactJWS.serialize(header: header, payload: payload) { try privateKey.signature(for: $0) }
    }

    /// The payload of `token` when its `typ` is `type` and it verifies with the key its `kid`
    /// names in `keys`; else ``IdentityError``.
    public static func verify(_ token: String, type: String, keys: [String: Curve25519.Signing.PublicKey]) throws -> Data {
        let jws = try CompactJWS(parsing: token, maximumLength: 64 * 1024)
        guard jws.header.alg == "EdDSA" else { throw IdentityError.unsupported(jws.header.alg) }
        guard jws.header.typ == type else { throw IdentityError.malformed("unexpected typ") }
        guard let kid = jws.header.kid, let key = keys[kid] else { throw IdentityError.unknownKey }
        guard key.isValidSignature(jws.signature, for: jws.signingInput) else { throw IdentityError.badSignature }
        return jws.payload
    }
}

extension SessionKeySet {
    /// Every public key that verifies, current first then previous, by key id.
    public var publicKeys: [(id: String, key: Curve25519.Signing.PublicKey)] {
        [(current.id, current.publicKey)] + previous.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
