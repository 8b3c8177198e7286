import Crypto
import Foundation
import Identity
import _CryptoExtras

/// Stands in for Apple in the gateway tests (a copy of AccountsTests' stand-in: test targets cannot share files): an RSA key of our own whose JWKS is written to a
/// temporary file that Accounts and the gateway read (`ACCOUNTS_APPLE_JWKS`, `GATEWAY_APPLE_JWKS`), and RS256 identity tokens signed
/// with it (or with another key, to test refusals).
enum AppleStandIn {
    static let bundleID = "com.recruitingcompass.app"
    static let kid = "test-apple-key"

    /// Made once per run (RSA key generation is slow in debug builds).
    static let key = makeKey()
    static let otherKey = makeKey()

    /// The session signing seed Accounts is started with (base64 of 32 random bytes).
    static let sessionSeed = Curve25519.Signing.PrivateKey().rawRepresentation.base64EncodedString()

    /// The JWKS file naming ``key`` under ``kid``, written once per run.
    static let jwksPath: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-tests-jwks-\(UUID().uuidString).json").path
        do {
            let primitives = try key.publicKey.getKeyPrimitives()
            let jwk: [String: Any] = [
                "kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
                "n": Base64URL.encode(primitives.modulus), "e": Base64URL.encode(primitives.publicExponent),
            ]
            try JSONSerialization.data(withJSONObject: ["keys": [jwk]]).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            fatalError("writing the test JWKS failed: \(error)")
        }
        return path
    }()

    private static func makeKey() -> _RSA.Signing.PrivateKey {
        do { return try _RSA.Signing.PrivateKey(keySize: .bits2048) } catch { fatalError("RSA key generation failed: \(error)") }
    }

    /// An identity token for `subject`; the arguments spoil one aspect at a time.
    static func token(
        subject: String, audience: String = bundleID, issuer: String = "https://appleid.apple.com",
        issuedAt: Date = Date(), lifetime: TimeInterval = 600, signer: _RSA.Signing.PrivateKey = key
    ) throws -> String {
        let seconds = Int(issuedAt.timeIntervalSince1970)
        let claims: [String: Any] = [
            "iss": issuer, "aud": audience, "sub": subject, "iat": seconds, "exp": seconds + Int(lifetime),
            "auth_time": seconds, "email": "x7q2@privaterelay.appleid.com", "email_verified": "true",
        ]
        let header = try JSONSerialization.data(withJSONObject: ["alg": "RS256", "kid": kid], options: [.sortedKeys])
        let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let signature = try signer.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
