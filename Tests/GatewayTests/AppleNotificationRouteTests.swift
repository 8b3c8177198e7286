import AppleStandIn
import Crypto
import Foundation
import GatewayTestSupport
import Identity
import TestSupport
import Testing
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

                let forged = try AppleStandIn.notification(
                    type: "account-delete", subject: appleId, signer: _RSA.Signing.PrivateKey(keySize: .bits2048))
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
                // Apple's call did not carry the user's session: the gateway learns of the deletion
                // from Accounts' `account.deleted` event, within the revocation bound.
                #expect(try await harness.waitForStatus(401, of: "/api/me", headers: bearer).status == 401)
                #expect(try await harness.userCount() == 0)
            }
        }
    }
}
