import AppleStandIn
import Crypto
import Foundation
import GatewayTestSupport
import Identity
import TestSupport
import Testing

extension GatewayIntegration {
    /// Supabase Auth (`/auth/v1`) through the real gateway and Accounts: the session body, the
    /// nonce check, and GoTrue's error bodies (legacy and 2024-01-01), which the Supabase clients
    /// turn into their own errors. The full client flow is in Tests/GatewayPython.
    @Suite(.serialized) struct SupabaseAuthTests {
        static func sha256Hex(_ text: String) -> String { SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined() }

        @Test func idTokenGrantChecksTheNonceAndAnswersInGoTrueShapes() async throws {
            let anon = try await PostgRESTTests.anonKey()
            try await GatewayHarness.run { harness in
                let key = ["apikey": anon]
                let versioned = key.merging(["X-Supabase-Api-Version": "2024-01-01"]) { a, _ in a }
                let appleId = "apple." + UUID().uuidString
                let raw = "raw-nonce-" + UUID().uuidString
                let token = try AppleStandIn.token(subject: appleId, nonce: Self.sha256Hex(raw))
                let path = "/auth/v1/token?grant_type=id_token"

                // A nonce that does not hash to the token's: 400 validation_failed, nothing opened.
                let sessionsBefore = try await harness.sessionCount()
                let mismatch = try await harness.http.send(
                    "POST", path, json: ["provider": "apple", "id_token": token, "nonce": "other"], headers: key)
                #expect(mismatch.status == 400)
                #expect(mismatch.json["code"] as? Int == 400 && mismatch.json["error_code"] as? String == "validation_failed")
                #expect((mismatch.json["msg"] as? String)?.contains("Nonces mismatch") == true)
                let onlyInToken = try await harness.http.send("POST", path, json: ["provider": "apple", "id_token": token], headers: versioned)
                #expect(onlyInToken.status == 400 && onlyInToken.json["code"] as? String == "validation_failed")
                #expect(onlyInToken.json["message"] is String && onlyInToken.json["msg"] == nil)
                #expect(onlyInToken.header("X-Supabase-Api-Version") == "2024-01-01")
                #expect(try await harness.sessionCount() == sessionsBefore)

                // The matching raw nonce: GoTrue's session, the access token a native session token.
                let signedIn = try await harness.http.send("POST", path, json: ["provider": "apple", "id_token": token, "nonce": raw], headers: key)
                #expect(signedIn.status == 200)
                let access = try #require(signedIn.json["access_token"] as? String)
                #expect(signedIn.json["token_type"] as? String == "bearer")
                #expect((signedIn.json["expires_in"] as? Int).map { (1...900).contains($0) } == true)
                let user = try #require(signedIn.json["user"] as? [String: Any])
                let userId = try #require((user["id"] as? String).flatMap(UUID.init(uuidString:)))
                #expect(user["aud"] as? String == "authenticated" && user["role"] as? String == "authenticated")
                #expect((user["app_metadata"] as? [String: Any])?["provider"] as? String == "apple")
                let claims = try JSONSerialization.jsonObject(with: try CompactJWS(parsing: access).payload) as? [String: Any]
                #expect(claims?["role"] as? String == "authenticated" && claims?["exp"] as? Int == signedIn.json["expires_at"] as? Int)
                let native = try await harness.http.get("/api/me/consents", headers: HTTPClient.bearer(access))
                #expect(native.status == 403)  // a session, but no account before eligibility
                let me = try await harness.http.get("/auth/v1/user", headers: key.merging(HTTPClient.bearer(access)) { a, _ in a })
                #expect(me.status == 200 && (me.json["id"] as? String).flatMap(UUID.init(uuidString:)) == userId)

                // The other refusals, each in GoTrue's shape.
                let noKey = try await harness.http.send("POST", path, json: ["provider": "apple", "id_token": token, "nonce": raw])
                #expect(noKey.status == 401 && noKey.json["error_code"] as? String == "no_api_key")
                let badGrant = try await harness.http.send("POST", "/auth/v1/token?grant_type=password", json: ["email": "a@b.c"], headers: key)
                #expect(badGrant.status == 400 && badGrant.json["error_code"] as? String == "unsupported_grant_type")
                let spent = try await harness.http.send(
                    "POST", "/auth/v1/token?grant_type=refresh_token", json: ["refresh_token": "nope"], headers: versioned)
                #expect(spent.status == 400 && spent.json["code"] as? String == "refresh_token_not_found")
                let noBearer = try await harness.http.get("/auth/v1/user", headers: key)
                #expect(noBearer.status == 401 && noBearer.json["error_code"] as? String == "no_authorization")
                // One parser reads `Authorization` at every door: an empty bearer token is no token at all,
                // answered in each door's body (it once reached the native verifier as a malformed token).
                let emptyBearer = ["Authorization": "Bearer  \t"]
                let goTrueEmpty = try await harness.http.get("/auth/v1/user", headers: key.merging(emptyBearer) { a, _ in a })
                #expect(goTrueEmpty.status == 401 && goTrueEmpty.json["error_code"] as? String == "no_authorization", "\(goTrueEmpty.text)")
                let nativeEmpty = try await harness.http.get("/api/me", headers: emptyBearer)
                #expect(
                    nativeEmpty.status == 401 && (nativeEmpty.json["details"] as? [String: Any])?["reason"] as? String == "sign_in_required",
                    "\(nativeEmpty.text)")
                let restEmpty = try await harness.http.get("/rest/v1/legal_acceptances?select=id", headers: key.merging(emptyBearer) { a, _ in a })
                #expect(restEmpty.status == 401 && restEmpty.json["code"] as? String == "PGRST301", "\(restEmpty.text)")
                let logout = try await harness.http.send(
                    "POST", "/auth/v1/logout?scope=local", headers: key.merging(HTTPClient.bearer(access)) { a, _ in a })
                #expect(logout.status == 204)
                let after = try await harness.http.get("/auth/v1/user", headers: key.merging(HTTPClient.bearer(access)) { a, _ in a })
                #expect(after.status == 403 && after.json["error_code"] as? String == "session_not_found")
            }
        }
    }
}
