import Crypto
import Foundation
import Identity
import _CryptoExtras

extension AppleStandIn {
    /// A server-to-server notification as Apple signs it: RS256, `events` a JSON string.
    static func notification(
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
