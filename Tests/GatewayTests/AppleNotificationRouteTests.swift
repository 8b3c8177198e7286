import Crypto
import Foundation
import Identity
import Testing
import TestSupport
import _CryptoExtras

extension GatewayIntegration {
    /// `POST /api/apple/notifications` as Apple calls it: a signed `account-delete` deletes the
    /// account once (a repeat changes nothing), and a payload not signed by Apple changes nothing.
    @Suite struct AppleNotificationRouteTests {
        @Test func appleAccountDeleteThroughTheGateway() async throws {
            try await GatewayHarness.run { harness in
                let appleId = "apple." + UUID().uuidString
                let user = try await harness.signedUpUser(appleId: appleId)
                let bearer = HTTPClient.bearer(user.token)

                let forged = try AppleStandIn.notification(type: "account-delete", subject: appleId, signer: _RSA.Signing.PrivateKey(keySize: .bits2048))
                let refused = try await harness.http.send("POST", "/api/apple/notifications", json: ["payload": forged])
                #expect(refused.status == 401)
                #expect(try await harness.http.get("/api/me", headers: bearer).status == 200)
                #expect(try await harness.http.send("POST", "/api/apple/notifications", json: ["nothing": 1]).status == 400)

                let payload = try AppleStandIn.notification(type: "account-delete", subject: appleId)
                let applied = try await harness.http.send("POST", "/api/apple/notifications", json: ["payload": payload])
                #expect(applied.status == 200 && applied.json["outcome"] as? String == "applied", "\(applied.json)")
                #expect(applied.json["certificateId"] as? String != nil)
                let repeated = try await harness.http.send("POST", "/api/apple/notifications", json: ["payload": payload])
                #expect(repeated.status == 200 && repeated.json["outcome"] as? String == "duplicate")
                #expect(try await harness.http.get("/api/me", headers: bearer).status == 401)
                #expect(try await harness.userCount() == 0)
            }
        }
    }
}

extension AppleStandIn {
    /// A server-to-server notification as Apple signs it: RS256, `events` a JSON string.
    static func notification(type: String, subject: String, signer: _RSA.Signing.PrivateKey = key) throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        let events: [String: Any] = ["type": type, "sub": subject, "event_time": now]
        let eventsText = String(decoding: try JSONSerialization.data(withJSONObject: events, options: [.sortedKeys]), as: UTF8.self)
        let claims: [String: Any] = [
            "iss": "https://appleid.apple.com", "aud": bundleID, "iat": now, "jti": UUID().uuidString, "events": eventsText,
        ]
        let header = try JSONSerialization.data(withJSONObject: ["alg": "RS256", "kid": kid], options: [.sortedKeys])
        let body = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        let input = Base64URL.encode(header) + "." + Base64URL.encode(body)
        let signature = try signer.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
