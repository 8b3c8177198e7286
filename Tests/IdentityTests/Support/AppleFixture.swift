import Crypto
import Foundation
import Identity
import _CryptoExtras

/// Stands in for Apple: RSA keys of our own, their JWKS written to a file, RS256 tokens.
enum AppleFixture {
    static let bundleID = "com.recruitingcompass.app"
    static let rawNonce = "6f1c2e7a-raw-nonce"

    /// Two 2048-bit keys, made once per test run (key generation is slow in debug builds).
    static let keyA = makeKey()
    static let keyB = makeKey()

    private static func makeKey() -> _RSA.Signing.PrivateKey {
        do {
            return try _RSA.Signing.PrivateKey(keySize: .bits2048)
        } catch {
            fatalError("RSA key generation failed: \(error)")
        }
    }

    /// Apple's JWK form of `key`'s public half.
    static func jwk(kid: String, key: _RSA.Signing.PrivateKey) throws -> [String: Any] {
        let primitives = try key.publicKey.getKeyPrimitives()
        return [
            "kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
            "n": Base64URL.encode(primitives.modulus), "e": Base64URL.encode(primitives.publicExponent),
        ]
    }

    /// Writes `{"keys":[…]}` to `path` (atomically, as a key sync would).
    static func writeJWKS(_ keys: [(kid: String, key: _RSA.Signing.PrivateKey)], to path: String) throws {
        let document: [String: Any] = ["keys": try keys.map { try jwk(kid: $0.kid, key: $0.key) }]
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// The claims of a typical first sign-in, issued `now`.
    static func claims(now: Date = Date()) -> [String: Any] {
        let seconds = Int(now.timeIntervalSince1970)
        return [
            "iss": "https://appleid.apple.com", "aud": bundleID, "sub": "001234.abcdef0123456789.0042",
            "iat": seconds, "exp": seconds + 600, "auth_time": seconds,
            "email": "x7q2@privaterelay.appleid.com", "email_verified": "true", "is_private_email": true,
            "nonce": SHA256.hash(data: Data(rawNonce.utf8)).map { String(format: "%02x", $0) }.joined(),
            "nonce_supported": true,
        ]
    }

    /// An RS256 token over `claims`, signed by `key`, naming `kid`.
    static func token(
        claims: [String: Any] = claims(), kid: String = "A", key: _RSA.Signing.PrivateKey = keyA, alg: String = "RS256"
    ) throws -> String {
        try compactJWS(header: ["alg": alg, "kid": kid], claims: claims) { input in
            try key.signature(for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5).rawRepresentation
        }
    }

    /// A verifier reading the JWKS at `path`.
    static func verifier(
        jwksPath: String, minimumRefreshInterval: Duration = .seconds(60), audiences: Set<String> = [bundleID]
    ) -> AppleIdentityVerifier {
        let cache = AppleKeyCache(
            source: .file(path: jwksPath), minimumRefreshInterval: minimumRefreshInterval, logger: quietLogger)
        return AppleIdentityVerifier(audiences: audiences, keys: cache, logger: quietLogger)
    }
}
