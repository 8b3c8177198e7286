import Foundation
import JWTKit

/// The RS256 keys of a JSON Web Key Set in Apple's format
/// (`{"keys":[{"kty":"RSA","kid":…,"use":"sig","alg":"RS256","n":…,"e":…}]}`), by key id, as
/// jwt-kit's `JWK`s.
///
/// Keys of another type, use or algorithm are skipped rather than refused, so a set that gains a
/// new kind of key keeps working; so are keys jwt-kit cannot make an RSA key of (under 2048 bits,
/// bad numbers). A set with no usable key at all is an error.
public struct JSONWebKeySet: Sendable {
    /// Upper bound on a key set document; Apple's is about 1.5 KB.
    public static let maximumDocumentSize = 256 * 1024

    public let keys: [String: JWK]

    private struct Document: Decodable { let keys: [Entry] }

    /// One entry, kept when jwt-kit can read it as a JWK (an unknown `kty` it cannot), with the
    /// `use` member jwt-kit does not read.
    private struct Entry: Decodable {
        let jwk: JWK?
        let use: String?

        private enum CodingKeys: String, CodingKey { case use }

        init(from decoder: any Decoder) throws {
            jwk = try? JWK(from: decoder)
            use = try? decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .use)
        }
    }

    /// Parses a JWKS document; throws ``IdentityError/keySetUnavailable(_:)`` when it is not one or
    /// holds no usable RS256 key.
    public init(json: Data) throws {
        guard json.count <= Self.maximumDocumentSize else { throw IdentityError.keySetUnavailable("key set too large") }
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: json)
        } catch {
            throw IdentityError.keySetUnavailable("not a JSON Web Key Set")
        }
        var keys: [String: JWK] = [:]
        for entry in document.keys {
            guard let jwk = entry.jwk, jwk.keyType == .rsa, (entry.use ?? "sig") == "sig", (jwk.algorithm ?? .rs256) == .rs256,
                let kid = jwk.keyIdentifier?.string, let n = jwk.modulus, let e = jwk.exponent,
                (try? Insecure.RSA.PublicKey(modulus: n, exponent: e)) != nil
            else { continue }
            keys[kid] = jwk
        }
        guard !keys.isEmpty else { throw IdentityError.keySetUnavailable("no usable RS256 key") }
        self.keys = keys
    }

    /// The keys in a jwt-kit collection, each named by its `kid` and fixed to RS256.
    func collection() async throws -> JWTKeyCollection {
        let collection = JWTKeyCollection(defaultJWTParser: TokenCoding.parser, defaultJWTSerializer: TokenCoding.serializer)
        for jwk in keys.values {
            var rs256 = jwk
            rs256.algorithm = .rs256
            try await collection.add(jwk: rs256, isDefault: false)
        }
        return collection
    }
}
