import AppleStandIn
import Contracts
import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension GatewayIntegration {
    /// The native API under `/api`: sessions, legal documents, consent, eligibility and deletion.
    @Suite(.serialized) struct NativeAPITests {
        @Test func signInEligibilityRefreshAndSignOut() async throws {
            try await GatewayHarness.run { harness in
                let appleId = "native." + UUID().uuidString
                let session = try await harness.signIn(appleId: appleId)
                let token = try #require(session["sessionToken"] as? String)
                let refresh = try #require(session["refreshToken"] as? String)
                #expect((session["user"] as? [String: Any])?["hasConfirmedEligibility"] as? Bool == false)
                // Before eligibility there is no account: /api/me is 403.
                #expect(try await harness.http.get("/api/me", headers: HTTPClient.bearer(token)).status == 403)
                let restricted = try await harness.http.send(
                    "POST", "/api/me/eligibility",
                    json: ["state": "WA", "eligibilityCertified": true, "tosVersion": try await harness.currentTerms()],
                    headers: HTTPClient.bearer(token))
                #expect(restricted.status == 403 && restricted.json["error"] as? String == "restricted_state")
                let eligible = try await harness.http.send(
                    "POST", "/api/me/eligibility",
                    json: ["state": "OH", "eligibilityCertified": true, "tosVersion": try await harness.currentTerms()],
                    headers: HTTPClient.bearer(token))
                #expect(eligible.status == 200 && eligible.json["hasConfirmedEligibility"] as? Bool == true)
                let me = try await harness.http.get("/api/me", headers: HTTPClient.bearer(token))
                #expect(me.status == 200 && me.json["state"] as? String == "OH" && me.json["appleId"] as? String == appleId)
                // Refresh rotates (the old refresh token's reuse is refused, below and in
                // aReusedRefreshTokenRevokesItsWholeSessionAtTheGateway).
                let rotated = try await harness.http.send("POST", "/api/auth/refresh", json: ["refreshToken": refresh])
                #expect(rotated.status == 200 && rotated.json["refreshToken"] as? String != refresh)
                // Sign out with the bearer session: its tokens stop working at once.
                let newToken = try #require(rotated.json["sessionToken"] as? String)
                let out = try await harness.http.send("POST", "/api/auth/sign-out", headers: HTTPClient.bearer(newToken))
                #expect(out.status == 200)
                #expect(try await harness.http.get("/api/me", headers: HTTPClient.bearer(newToken)).status == 401)
                #expect(try await harness.http.send("POST", "/api/auth/refresh", json: ["refreshToken": refresh]).status == 401)
                #expect(try await harness.http.send("POST", "/api/auth/sign-out").status == 401)
                // Sign-out by refresh token (no session header), then nothing of that session works.
                let other = try await harness.signIn(appleId: appleId)
                let byRefresh = try await harness.http.send(
                    "POST", "/api/auth/sign-out", json: ["refreshToken": other["refreshToken"] as? String ?? ""])
                #expect(byRefresh.status == 200)
                #expect(
                    try await harness.http.send("POST", "/api/auth/refresh", json: ["refreshToken": other["refreshToken"] as? String ?? ""]).status
                        == 401)
                #expect(try await harness.http.send("POST", "/api/me/eligibility", json: ["state": "OH"]).status == 401)
                // A refused Apple token is 401 and writes nothing.
                let forged = try await harness.http.send(
                    "POST", "/api/auth/apple", json: ["identityToken": try AppleStandIn.token(subject: "x", signer: AppleStandIn.otherKey)])
                #expect(forged.status == 401 && forged.json["error"] as? String == "unauthenticated")
            }
        }

        /// A refresh token used again after its rotation means two parties hold the session: the
        /// reuse is refused and revokes the whole session, so the access and refresh tokens the
        /// rotation issued stop working too, at the gateway's own session view as well.
        @Test func aReusedRefreshTokenRevokesItsWholeSessionAtTheGateway() async throws {
            try await GatewayHarness.run { harness in
                let user = try await harness.signedUpUser()
                let rotated = try await harness.http.send("POST", "/api/auth/refresh", json: ["refreshToken": user.refresh])
                #expect(rotated.status == 200)
                let access = HTTPClient.bearer(try #require(rotated.json["sessionToken"] as? String))
                let newRefresh = try #require(rotated.json["refreshToken"] as? String)
                #expect(try await harness.http.get("/api/me", headers: access).status == 200)
                // A second sign-in of the same user is another family and is left alone.
                let other = try await harness.signIn(
                    appleId: try #require(try await harness.http.get("/api/me", headers: access).json["appleId"] as? String))
                let otherAccess = HTTPClient.bearer(try #require(other["sessionToken"] as? String))

                let reuse = try await harness.http.send("POST", "/api/auth/refresh", json: ["refreshToken": user.refresh])
                #expect(reuse.status == 401)
                let refused = try await harness.waitForStatus(401, of: "/api/me", headers: access)
                #expect(refused.status == 401, "the rotated session's access token is refused at the gateway within \(refused.elapsed)")
                #expect(try await harness.http.send("POST", "/api/auth/refresh", json: ["refreshToken": newRefresh]).status == 401)
                #expect(try await harness.http.get("/api/me", headers: otherAccess).status == 200)
                // Logged as a security event, naming the session, never a token.
                let log = harness.output(of: "Accounts")
                #expect(log.contains("refresh_token_reuse"))
                #expect(!log.contains(user.refresh) && !log.contains(newRefresh))
            }
        }

        @Test func legalDocumentsWithETags() async throws {
            try await GatewayHarness.run { harness in
                for type in ["privacy_policy", "terms_of_service"] {
                    let current = try await harness.http.get("/api/legal/\(type)")
                    #expect(current.status == 200)
                    let summary = try #require(current.json["summary"] as? [String: Any])
                    let digest = try #require(summary["digest"] as? String)
                    #expect(current.header("ETag") == "\"\(digest)\"")
                    let notModified = try await harness.http.get("/api/legal/\(type)", headers: ["If-None-Match": "\"\(digest)\""])
                    #expect(notModified.status == 304 && notModified.body.isEmpty)
                    #expect(try await harness.http.get("/api/legal/\(type)", headers: ["If-None-Match": "\"other\""]).status == 200)
                    let outline = try await harness.http.get("/api/legal/\(type)/outline")
                    #expect(outline.status == 200 && ((outline.json["outline"] as? [Any])?.count ?? 0) >= 11)
                    #expect(try await harness.http.get("/api/legal/\(type)/outline", headers: ["If-None-Match": "W/\"\(digest)\""]).status == 304)
                    let versions = try await harness.http.get("/api/legal/\(type)/versions")
                    let list = try #require(versions.json["versions"] as? [[String: Any]])
                    let version = try #require(list.first?["version"] as? String)
                    let one = try await harness.http.get("/api/legal/\(type)/versions/\(version)")
                    #expect(one.status == 200 && one.header("ETag") == "\"\(digest)\"")
                    #expect(try await harness.http.get("/api/legal/\(type)/versions/9.9.9").status == 404)
                }
                let unknown = try await harness.http.get("/api/legal/cookie_policy")
                #expect(unknown.status == 404 && unknown.json["error"] as? String == "not_found")
            }
        }

        @Test func consentStatusActionsHistoryAndReceipts() async throws {
            try await GatewayHarness.run { harness in
                let appleId = "apple." + UUID().uuidString
                let user = try await harness.signedUpUser(appleId: appleId)
                var bearer = HTTPClient.bearer(user.token)
                let privacy = try await harness.legalClient.call(LegalCurrent.self, .init(type: .privacyPolicy)).summary.version
                let terms = try await harness.currentTerms()
                let status = try await harness.http.get("/api/me/consents", headers: bearer)
                let documents = try #require(status.json["documents"] as? [[String: Any]])
                #expect(documents.contains { $0["documentType"] as? String == "terms_of_service" && $0["needsAcceptance"] as? Bool == false })
                // Acknowledge the privacy policy (retried with one key: recorded once).
                let headers = bearer.merging(["Idempotency-Key": "ack-1"]) { a, _ in a }
                let ack = try await harness.http.send(
                    "POST", "/api/me/consents/privacy_policy/acknowledge", json: ["version": privacy], headers: headers)
                #expect(ack.status == 201 && ack.json["action"] as? String == "acknowledge")
                let again = try await harness.http.send(
                    "POST", "/api/me/consents/privacy_policy/acknowledge", json: ["version": privacy], headers: headers)
                #expect(again.json["recordId"] as? String == ack.json["recordId"] as? String)
                // The same key for another body is a client error, not the first action's reply.
                let reused = try await harness.http.send(
                    "POST", "/api/me/consents/privacy_policy/acknowledge", json: ["version": privacy + "-other"], headers: headers)
                #expect(reused.status == 422 && reused.json["error"] as? String == "idempotency_key_reused", "\(reused.status) \(reused.text)")
                // A key longer than the one rule allows is refused, not ignored.
                let long = bearer.merging(["Idempotency-Key": String(repeating: "k", count: 201)]) { _, key in key }
                let tooLong = try await harness.http.send(
                    "POST", "/api/me/consents/privacy_policy/acknowledge", json: ["version": privacy], headers: long)
                #expect(tooLong.status == 400, "\(tooLong.status) \(tooLong.text)")
                // Decline then accept the terms (through Accounts).
                let decline = try await harness.http.send(
                    "POST", "/api/me/consents/terms_of_service/decline", json: ["version": terms], headers: bearer)
                #expect(decline.status == 201 && decline.json["action"] as? String == "decline")
                // Declining signs out everywhere (seed 001): the access and refresh tokens are refused.
                #expect(try await harness.http.get("/api/me", headers: bearer).status == 401)
                #expect(try await harness.http.send("POST", "/api/auth/refresh", json: ["refreshToken": user.refresh]).status == 401)
                // Signing in again shows the terms still to accept.
                let signedInAgain = try await harness.signIn(appleId: appleId)
                bearer = HTTPClient.bearer(try #require(signedInAgain["sessionToken"] as? String))
                let me = try await harness.http.get("/api/me", headers: bearer)
                #expect(me.json["needsToAcceptTOS"] as? Bool == true)
                let accept = try await harness.http.send(
                    "POST", "/api/me/consents/terms_of_service/accept", json: ["version": terms], headers: bearer)
                #expect(accept.status == 201 && accept.json["action"] as? String == "accept")
                // Bad input: unknown action 404, unknown version 400, another type 404.
                #expect(
                    try await harness.http.send("POST", "/api/me/consents/terms_of_service/shrug", json: ["version": terms], headers: bearer).status
                        == 404)
                #expect(
                    try await harness.http.send("POST", "/api/me/consents/privacy_policy/accept", json: ["version": "0.0"], headers: bearer).status
                        == 400)
                // History, newest first, filtered and limited.
                let history = try await harness.http.get("/api/me/consents/history?documentType=terms_of_service&limit=2", headers: bearer)
                let records = try #require(history.json["records"] as? [[String: Any]])
                #expect(records.count == 2 && (records[0]["receipt"] as? [String: Any])?["action"] as? String == "accept")
                for limit in ["0", "501"] {
                    let refused = try await harness.http.get("/api/me/consents/history?limit=\(limit)", headers: bearer)
                    #expect(refused.status == 400 && refused.json["message"] as? String == "limit must be between 1 and 500", "\(limit)")
                }
                // Receipts verify; a tampered one does not.
                let verified = try await harness.http.send(
                    "POST", "/api/receipts/verify", body: accept.body, headers: ["Content-Type": "application/json"])
                #expect(verified.status == 200 && verified.json["valid"] as? Bool == true)
                var tampered = accept.json
                tampered["version"] = "1999"
                let refused = try await harness.http.send("POST", "/api/receipts/verify", json: tampered)
                #expect(refused.json["valid"] as? Bool == false)
                let garbage = try await harness.http.send("POST", "/api/receipts/verify", json: ["recordId": "nope"])
                #expect(garbage.status == 400 && garbage.json["error"] as? String == "invalid_argument")
                // Without a session: 401.
                #expect(try await harness.http.get("/api/me/consents").status == 401)
            }
        }

        /// Deletion, and the caller's W3C trace id reaching the service's log through the envelope.
        @Test func accountDeletion() async throws {
            try await GatewayHarness.run(accounts: ["LOG_LEVEL": "notice"]) { harness in
                let user = try await harness.signedUpUser()
                let bearer = HTTPClient.bearer(user.token)
                let preview = try await harness.http.get("/api/me/deletion/preview", headers: bearer)
                #expect(preview.status == 200 && (preview.json["deleted"] as? [Any])?.isEmpty == false, "\(preview.status) \(preview.text)")
                let first = try await harness.http.send("POST", "/api/me/deletion", headers: bearer)
                #expect(first.status == 201)
                let firstId = try #require(first.json["requestId"] as? String)
                #expect(try await harness.http.send("DELETE", "/api/me/deletion/\(firstId)", headers: bearer).status == 204)
                #expect(try await harness.http.send("POST", "/api/me/deletion/\(firstId)/confirm", headers: bearer).status == 404)
                #expect(try await harness.http.send("POST", "/api/me/deletion/not-a-uuid/confirm", headers: bearer).status == 400)
                #expect(try await harness.http.send("DELETE", "/api/me/deletion/\(UUID().uuidString)", headers: bearer).status == 404)
                let second = try await harness.http.send("POST", "/api/me/deletion", headers: bearer)
                let secondId = try #require(second.json["requestId"] as? String)
                let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
                let confirmed = try await harness.http.send(
                    "POST", "/api/me/deletion/\(secondId)/confirm",
                    headers: bearer.merging(["traceparent": "00-\(traceID)-00f067aa0ba902b7-01"]) { a, _ in a })
                // Accounts logs the deletion with the envelope's traceparent (read from its output pipe).
                let accountsLog = try await withTimeout(.seconds(10), "the deletion log line") {
                    while true {
                        let lines = harness.output(of: "Accounts").split(separator: "\n").filter { $0.contains("account deleted") }
                        if !lines.isEmpty { return lines.map(String.init) }
                        try await Task.sleep(for: .milliseconds(20))
                    }
                }
                #expect(accountsLog.count == 1 && accountsLog[0].contains("00-\(traceID)-"), "\(accountsLog)")
                #expect(confirmed.status == 200 && (confirmed.json["userId"] as? String)?.lowercased() == user.id.lowercased())
                // The session died with the account.
                #expect(try await harness.http.get("/api/me", headers: bearer).status == 401)
                #expect(try await harness.userCount() == 0)
            }
        }
    }
}
