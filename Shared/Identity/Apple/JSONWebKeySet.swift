import Foundation
import _CryptoExtras

/// The RS256 keys of a JSON Web Key Set in Apple's format
/// (`{"keys":[{"kty":"RSA","kid":…,"use":"sig","alg":"RS256","n":…,"e":…}]}`), by key id.
///
/// Keys of another type, use or algorithm are skipped rather than refused, so a set that gains a
/// new kind of key keeps working. A set with no usable key at all is an error.
public struct JSONWebKeySet: Sendable {
    /// Upper bound on a key set document; Apple's is about 1.5 KB.
    public static let maximumDocumentSize = 256 * 1024

    public let keys: [String: _RSA.Signing.PublicKey]

    private struct Document: Decodable { let keys: [Key] }
    private struct Key: Decodable {
        let kty: String
        let kid: String?
        let use: String?
        let alg: String?
        let n: String?
        let e: String?
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
        var keys: [String: _RSA.Signing.PublicKey] = [:]
        for key in document.keys where key.kty == "RSA" && (key.use ?? "sig") == "sig" && (key.alg ?? "RS256") == "RS256" {
            guard let kid = key.kid, let n = key.n.flatMap(Base64URL.decode), let e = key.e.flatMap(Base64URL.decode),
                let publicKey = try? _RSA.Signing.PublicKey(n: n, e: e)
            else { continue }
            keys[kid] = publicKey
        }
        guard !keys.isEmpty else { throw IdentityError.keySetUnavailable("no usable RS256 key") }
        self.keys = keys
    }
}
