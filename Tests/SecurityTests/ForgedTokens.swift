import AppleStandIn
import Crypto
import Foundation

/// Session tokens made by hand, the way an attacker would: JSON header and claims, base64url,
/// signed with Ed25519 (the real session key from the Apple stand-in, or another one), or not
/// signed at all.
enum ForgedTokens {
    /// The key id Accounts gives its current session key (`ACCOUNTS_SESSION_KEY_ID` default).
    static let keyID = "s1"

    static var realKey: Curve25519.Signing.PrivateKey {
        try! Curve25519.Signing.PrivateKey(rawRepresentation: Data(base64Encoded: AppleStandIn.sessionSeed)!)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decodeBase64URL(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    static func json(_ object: [String: Any]) -> Data {
        try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    /// The claims of a real token (to copy its `sub` and `sid`).
    static func claims(of token: String) -> [String: Any] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = decodeBase64URL(parts[1]) else { return [:] }
        return (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any] ?? [:]
    }

    /// Claims like Accounts issues, with `overrides` applied.
    static func sessionClaims(like token: String, _ overrides: [String: Any] = [:]) -> [String: Any] {
        let real = claims(of: token)
        let now = Int(Date().timeIntervalSince1970)
        var claims: [String: Any] = [
            "sub": real["sub"] ?? "", "sid": real["sid"] ?? "", "iss": "recruiting-compass", "aud": ["recruiting-compass-app"],
            "iat": now, "exp": now + 600,
        ]
        for (key, value) in overrides { claims[key] = value }
        return claims
    }

    /// `header.payload.signature` signed with `key` (EdDSA).
    static func signed(_ claims: [String: Any], key: Curve25519.Signing.PrivateKey = realKey, header: [String: Any]? = nil) -> String {
        let head = header ?? ["alg": "EdDSA", "typ": "JWT", "kid": keyID]
        let input = base64URL(json(head)) + "." + base64URL(json(claims))
        let signature = try! key.signature(for: Data(input.utf8))
        return input + "." + base64URL(signature)
    }

    /// `alg: none`: no signature segment (RFC 7519's unsecured JWT), or a junk one.
    static func unsigned(_ claims: [String: Any], signature: String = "") -> String {
        base64URL(json(["alg": "none", "typ": "JWT"])) + "." + base64URL(json(claims)) + "." + signature
    }

    /// The token with one bit of its signature flipped.
    static func flippedSignature(_ token: String) -> String {
        var parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var signature = decodeBase64URL(Substring(parts[2]))!
        signature[signature.startIndex + 10] ^= 0x01
        parts[2] = base64URL(signature)
        return parts.joined(separator: ".")
    }

    /// The token's real header and signature around a changed payload.
    static func swappedPayload(_ token: String, _ claims: [String: Any]) -> String {
        var parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts[1] = base64URL(json(claims))
        return parts.joined(separator: ".")
    }
}
