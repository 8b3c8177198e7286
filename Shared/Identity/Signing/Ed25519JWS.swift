import Crypto
import Foundation
import JWTKit

/// Compact JWS signed with Ed25519 (`alg` EdDSA) over any payload, verified through jwt-kit: what
/// signed documents other than session tokens use (Accounts' deletion certificates). The header carries
/// `kid` and `typ` so a verifier picks the key and refuses a token of another kind (a session
/// token is never a certificate, and the other way round).
public enum Ed25519JWS {
    /// Certificates carry a list of what was deleted: more than a session token, less than this.
    static let maximumLength = 64 * 1024

    /// `header.payload.signature` over `payload` exactly as given.
    ///
    /// Synchronous, and so not through jwt-kit (which signs only through its key collection, an
    /// actor): Accounts signs a certificate inside the database transaction that deletes the
    /// account, a synchronous closure. The format is the one jwt-kit reads: header
    /// `{"alg":"EdDSA","kid":…,"typ":…}` (sorted keys), base64url segments.
    public static func sign(payload: Data, type: String, key: SessionSigningKey) throws -> String {
        let header = try JSONEncoder.sortedKeys.encode(["alg": "EdDSA", "kid": key.id, "typ": type])
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(try key.privateKey.signature(for: Data(input.utf8)))
    }

    /// The payload of `token` when its `typ` is `type` and it verifies with the key its `kid`
    /// names in `keys`; else ``IdentityError``.
    public static func verify(_ token: String, type: String, keys: [String: Curve25519.Signing.PublicKey]) async throws -> Data {
        let jws = try CompactJWS(parsing: token, maximumLength: maximumLength)
        guard jws.algorithm == "EdDSA" else { throw IdentityError.unsupported(jws.algorithm) }
        guard jws.header.typ == type else { throw IdentityError.malformed("unexpected typ") }
        guard let kid = jws.header.kid, let key = keys[kid] else { throw IdentityError.unknownKey }
        let collection = JWTKeyCollection(defaultJWTParser: TokenCoding.parser, defaultJWTSerializer: TokenCoding.serializer)
        await collection.add(eddsa: EdDSA.PublicKey(backing: key), kid: JWKIdentifier(string: kid), parser: TokenCoding.parser)
        do {
            _ = try await collection.verify(token, as: RawPayload.self)
        } catch {
            throw IdentityError.fromJWTKit(error)
        }
        return jws.payload
    }
}

/// A payload jwt-kit verifies without keeping: the caller decodes the bytes itself.
struct RawPayload: JWTPayload {
    init(from decoder: any Decoder) throws {}

    func encode(to encoder: any Encoder) throws {}

    func verify(using algorithm: some JWTAlgorithm) throws {}
}

extension JSONEncoder {
    /// An encoder with sorted keys, for headers written by hand.
    fileprivate static var sortedKeys: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }
}

extension SessionKeySet {
    /// Every public key that verifies, current first then previous, by key id.
    public var publicKeys: [(id: String, key: Curve25519.Signing.PublicKey)] {
        [(current.id, current.publicKey)] + previous.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
