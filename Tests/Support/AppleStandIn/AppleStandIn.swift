import Crypto
import Foundation
import Identity
import _CryptoExtras

/// Stands in for Apple in the tests of Accounts and the gateway: an RSA key of our own whose JWKS is
/// written to a temporary file that the services read (`ACCOUNTS_APPLE_JWKS`, `GATEWAY_APPLE_JWKS`),
/// and RS256 identity tokens and server-to-server notifications signed with it (or with another
/// key, to test refusals). Apple is outside our system, so a stand-in is what the tests can have.
public enum AppleStandIn {
    public static let bundleID = "com.recruitingcompass.app"
    public static let kid = "test-apple-key"

    /// Made once per run (RSA key generation is slow in debug builds).
    public static let key = makeKey()
    public static let otherKey = makeKey()

    /// The session signing seed Accounts is started with (base64 of 32 random bytes).
    public static let sessionSeed = Curve25519.Signing.PrivateKey().rawRepresentation.base64EncodedString()

    /// The JWKS file naming ``key`` under ``kid``, written once per run.
    public static let jwksPath: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("apple-stand-in-jwks-\(UUID().uuidString).json").path
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
    public static func token(
        subject: String, audience: String = bundleID, issuer: String = "https://appleid.apple.com",
        issuedAt: Date = Date(), lifetime: TimeInterval = 600, signer: _RSA.Signing.PrivateKey = key, nonce: String? = nil
    ) throws -> String {
        let seconds = Int(issuedAt.timeIntervalSince1970)
        var claims: [String: Any] = [
            "iss": issuer, "aud": audience, "sub": subject, "iat": seconds, "exp": seconds + Int(lifetime),
            "auth_time": seconds, "email": "x7q2@privaterelay.appleid.com", "email_verified": "true",
        ]
        if let nonce { claims["nonce"] = nonce }
        let header = try JSONSerialization.data(withJSONObject: ["alg": "RS256", "kid": kid], options: [.sortedKeys])
        let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let signature = try signer.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// A server-to-server notification as Apple signs it: RS256, `events` a JSON string.
    public static func notification(
        type: String, subject: String, eventTime: Int = Int(Date().timeIntervalSince1970), audience: String = bundleID,
        signer: _RSA.Signing.PrivateKey = key
    ) throws -> String {
        let events: [String: Any] = [
            "type": type, "sub": subject, "email": "x7q2@privaterelay.appleid.com", "is_private_email": "true", "event_time": eventTime,
        ]
        let eventsText = String(decoding: try JSONSerialization.data(withJSONObject: events, options: [.sortedKeys]), as: UTF8.self)
        let claims: [String: Any] = [
            "iss": "https://appleid.apple.com", "aud": audience, "iat": Int(Date().timeIntervalSince1970),
            "jti": UUID().uuidString, "events": eventsText,
        ]
        let header = try JSONSerialization.data(withJSONObject: ["alg": "RS256", "kid": kid], options: [.sortedKeys])
        let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let signature = try signer.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
