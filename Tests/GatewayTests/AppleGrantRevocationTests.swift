import AppleStandIn
import Bus
import Contracts
import Crypto
import Foundation
import GatewayTestSupport
import Identity
import TestSupport
import Testing

extension GatewayIntegration {
    /// Sign in with Apple's grant, end to end through the gateway on the real stack, with Apple's
    /// token endpoints played by ``AppleTokenStandIn`` (which checks every client secret): the
    /// authorization code from the sign-in or handed over afterwards, the one revocation a deletion
    /// makes, retries while Apple is down and what the certificate says, an expired session before a
    /// deletion, and the operator's `compass users`. One stack for all, to keep the suite short.
    @Suite(.serialized) struct AppleGrantRevocationTests {
        @Test func theGrantIsRevokedOnceWhicheverWayTheCodeArrivesAndTheCertificateSaysSo() async throws {
            let apple = try AppleTokenStandIn()
            defer { apple.stop() }
            var accounts = apple.environment
            accounts["ACCOUNTS_APPLE_REVOKE_SWEEP_INTERVAL"] = "100ms"
            // Documents' counts are not what this test is about: not asked, so no deletion waits for them.
            accounts["ACCOUNTS_DOCUMENTS_USAGE_TIMEOUT"] = "0"
            try await GatewayHarness.run(accounts: accounts) { harness in
                let flow = Flow(harness: harness, apple: apple)

                // Native sign-in with the code → delete: exactly one revocation, of that grant.
                let native = try await flow.signUp(code: "code-native-\(UUID())")
                let deleted = try await flow.delete(native)
                // The reply waits up to a second for Apple: `revoked` unless the machine is slow.
                #expect(["revoked", "pending"].contains(try flow.grant(deleted)["status"] as? String), "\(deleted)")
                #expect(try await flow.waitForCertificate(deleted, status: "revoked")["attempts"] as? Int == 1)
                try await Task.sleep(for: .milliseconds(500))  // several sweeps: nothing is revoked twice
                #expect(apple.revoked.filter { $0 == AppleTokenStandIn.refreshToken(for: native.code) }.count == 1)

                // Apple down during the deletion: the user's deletion completes at once; the revocation
                // is retried with backoff (100, 200, 200 ms here) and the certificate re-signed.
                let unlucky = try await flow.signUp(code: "code-down-\(UUID())")
                let attemptsBefore = apple.revokeAttempts
                apple.failNextRevocations(2)
                let whileDown = try await flow.delete(unlucky)
                #expect(try flow.grant(whileDown)["status"] as? String == "pending", "\(whileDown)")
                #expect(try await harness.http.get("/api/me", headers: HTTPClient.bearer(unlucky.token)).status == 401)
                let settled = try await flow.waitForCertificate(whileDown, status: "revoked")
                #expect(settled["attempts"] as? Int == 3)
                #expect(apple.revokeAttempts - attemptsBefore == 3)
                #expect(apple.revoked.filter { $0 == AppleTokenStandIn.refreshToken(for: unlucky.code) }.count == 1)

                // Apple down for longer than the retries: given up after 1 + 3 attempts, said so.
                let abandoned = try await flow.signUp(code: "code-gone-\(UUID())")
                apple.failNextRevocations(1000)
                let givenUp = try await flow.waitForCertificate(try await flow.delete(abandoned), status: "revocation_failed")
                apple.failNextRevocations(0)
                #expect(givenUp["attempts"] as? Int == 4)
                #expect(!apple.revoked.contains(AppleTokenStandIn.refreshToken(for: abandoned.code)))

                // A Supabase-SDK-style sign-in (no code) hands the code over afterwards.
                let sdkAppleId = "apple.sdk.\(UUID())"
                let sdk = try await harness.signIn(appleId: sdkAppleId)
                let sdkToken = try #require(sdk["sessionToken"] as? String)
                #expect(sdk["appleTokenStored"] == nil)
                let handOverPath = "/api/auth/apple/authorization-code"
                let sdkCode = "code-sdk-\(UUID())"
                apple.authorize(code: sdkCode, subject: sdkAppleId)
                // A code from someone else's sign-in is refused, and the grant it brought revoked.
                let foreignCode = "code-foreign-\(UUID())"
                apple.authorize(code: foreignCode, subject: "apple.someone-else.\(UUID())")
                let foreign = try await harness.http.send(
                    "POST", handOverPath, json: ["authorizationCode": foreignCode], headers: HTTPClient.bearer(sdkToken))
                #expect(foreign.status == 400 && foreign.json["error"] as? String == "invalid_argument", "\(foreign.text)")
                #expect(apple.revoked.contains(AppleTokenStandIn.refreshToken(for: foreignCode)))
                let handed = try await harness.http.send(
                    "POST", handOverPath, json: ["authorizationCode": sdkCode], headers: HTTPClient.bearer(sdkToken))
                #expect(handed.status == 200 && handed.json["appleTokenStored"] as? Bool == true, "\(handed.text)")
                #expect(apple.exchanges.contains(sdkCode))
                let refused = try await harness.http.send(
                    "POST", handOverPath, json: ["authorizationCode": AppleTokenStandIn.refusedCode], headers: HTTPClient.bearer(sdkToken))
                #expect(refused.status == 400 && refused.json["error"] as? String == "invalid_argument", "\(refused.text)")
                let anonymous = try await harness.http.send("POST", handOverPath, json: ["authorizationCode": sdkCode])
                #expect(anonymous.status == 401 && Flow.reason(anonymous) == "sign_in_required", "\(anonymous.text)")
                let sdkUser = try await flow.signUp(session: sdk, appleId: sdkAppleId, code: sdkCode)
                let sdkDeleted = try await flow.delete(sdkUser)
                #expect(try await flow.waitForCertificate(sdkDeleted, status: "revoked")["attempts"] as? Int == 1)
                #expect(apple.revoked.filter { $0 == AppleTokenStandIn.refreshToken(for: sdkCode) }.count == 1)

                // Deleting while the session has expired: a 401 whose reason says what to do, then a
                // fresh Apple sign-in deletes the same account, revoking its grant.
                let away = try await flow.signUp(code: "code-away-\(UUID())")
                try await harness.database.pool.withConnection { db in
                    _ = try db.execute("UPDATE accounts.sessions SET expires_at = now() - interval '1 minute' WHERE id = $1", away.sessionId)
                }
                let stale = try await Flow.expiredToken(userId: away.id, sessionId: away.sessionId, appleId: away.appleId)
                let refusedDeletion = try await harness.http.send(
                    "POST", "/api/me/deletion", json: [String: String](), headers: HTTPClient.bearer(stale))
                #expect(refusedDeletion.status == 401 && Flow.reason(refusedDeletion) == "session_expired", "\(refusedDeletion.text)")
                #expect(refusedDeletion.header("www-authenticate") == "Bearer")
                let refresh = try await harness.http.send("POST", "/api/auth/refresh", json: ["refreshToken": away.refresh])
                #expect(refresh.status == 401 && Flow.reason(refresh) == "sign_in_required", "\(refresh.text)")
                let back = try await flow.signIn(appleId: away.appleId, code: "code-back-\(UUID())")
                #expect(((back.json["user"] as? [String: Any])?["id"] as? String).flatMap(UUID.init(uuidString:)) == away.id)
                let returned = Flow.User(
                    id: away.id, appleId: away.appleId, token: try #require(back.json["sessionToken"] as? String), refresh: "",
                    sessionId: away.sessionId, code: back.code)
                let finallyDeleted = try await flow.delete(returned)
                #expect(try await flow.waitForCertificate(finallyDeleted, status: "revoked")["status"] as? String == "revoked")
                #expect(apple.revoked.filter { $0 == AppleTokenStandIn.refreshToken(for: back.code) }.count == 1)

                // The operator's `compass users`: find by email and Apple subject, show, delete through
                // the same deletion (certificate, revocation); refused to anyone but an operator.
                let email = "ops-\(UUID().uuidString.prefix(8))@Example.com"
                let tester = try await flow.signUp(code: "code-ops-\(UUID())", email: email)
                let id = tester.id.uuidString.lowercased()
                var cli = harness.gatewayEnvironment
                cli["USER"] = "test-operator"
                let compass = ChildProcess.product("compass")
                let byEmail = try await ChildProcess.run(compass, ["users", "find", email.lowercased()], environment: cli)
                #expect(byEmail.status == 0 && byEmail.output.hasPrefix(id), "\(byEmail.output)\(byEmail.errors)")
                let bySubject = try await ChildProcess.run(compass, ["users", "find", tester.appleId], environment: cli)
                #expect(bySubject.status == 0 && bySubject.output.contains(email), "\(bySubject.output)\(bySubject.errors)")
                let shown = try await ChildProcess.run(compass, ["users", "show", id], environment: cli)
                #expect(shown.status == 0 && shown.output.contains(tester.appleId) && shown.output.contains("deletionPreview"), "\(shown.output)")
                let dryRun = try await ChildProcess.run(compass, ["users", "delete", tester.appleId], environment: cli)
                #expect(dryRun.status == 1 && dryRun.output.contains("nothing deleted"), "\(dryRun.output)\(dryRun.errors)")
                #expect(try await harness.http.get("/api/me", headers: HTTPClient.bearer(tester.token)).status == 200)
                let removed = try await ChildProcess.run(compass, ["users", "delete", email, "--yes"], environment: cli)
                #expect(removed.status == 0 && removed.output.contains("deleted \(id)"), "\(removed.output)\(removed.errors)")
                #expect(removed.output.contains("certificate ") && removed.output.contains("apple grant "), "\(removed.output)")
                #expect(try await harness.waitForStatus(401, of: "/api/me", headers: HTTPClient.bearer(tester.token)).status == 401)
                let gone = try await ChildProcess.run(compass, ["users", "find", id], environment: cli)
                #expect(gone.status != 0 && (gone.output + gone.errors).contains("no user matches"), "\(gone.output)\(gone.errors)")
                #expect(try await flow.waitForRevocation(of: tester.code))
                await #expect(throws: BusError.self) {
                    try await harness.accountsClient.call(AccountsFindUsers.self, .init(email: email), principal: GatewayHarness.gateway)
                }
                #expect(apple.problems.isEmpty, "\(apple.problems)")
            }
        }
    }
}

/// The steps the test repeats, through the gateway.
private struct Flow {
    let harness: GatewayHarness
    let apple: AppleTokenStandIn

    struct User {
        let id: UUID
        let appleId: String
        let token: String
        let refresh: String
        let sessionId: UUID
        let code: String
    }

    /// `POST /api/auth/apple` with an authorization code.
    func signIn(appleId: String, code: String) async throws -> (json: [String: Any], code: String) {
        let reply = try await harness.http.send(
            "POST", "/api/auth/apple", json: ["identityToken": try AppleStandIn.token(subject: appleId), "authorizationCode": code])
        guard reply.status == 200 else { throw TestSupportError("sign-in answered \(reply.status): \(reply.text)") }
        #expect(reply.json["appleTokenStored"] as? Bool == true, "\(reply.text)")
        return (reply.json, code)
    }

    /// A new account: Apple sign-in carrying `code`, then seed 004's sign-up.
    func signUp(code: String, email: String = "a@example.com") async throws -> User {
        let appleId = "apple.grant.\(UUID())"
        return try await signUp(session: try await signIn(appleId: appleId, code: code).json, appleId: appleId, code: code, email: email)
    }

    func signUp(session: [String: Any], appleId: String, code: String, email: String = "a@example.com") async throws -> User {
        let token = try #require(session["sessionToken"] as? String)
        let reply = try await harness.http.send(
            "POST", "/api/users",
            json: [
                "apple_id": appleId, "email": email, "name": "Alex", "state": "AL", "eligibility_certified": true,
                "tos_version": try await harness.currentTerms(),
            ],
            headers: HTTPClient.bearer(token))
        guard reply.status == 200, let id = (reply.json["id"] as? String).flatMap(UUID.init(uuidString:)) else {
            throw TestSupportError("sign-up answered \(reply.status): \(reply.text)")
        }
        return User(
            id: id, appleId: appleId, token: token, refresh: try #require(session["refreshToken"] as? String),
            sessionId: try #require((session["sessionId"] as? String).flatMap(UUID.init(uuidString:))), code: code)
    }

    /// Requests and confirms the deletion as the user; the confirmation's JSON.
    func delete(_ user: User) async throws -> [String: Any] {
        let bearer = HTTPClient.bearer(user.token)
        let requested = try await harness.http.send("POST", "/api/me/deletion", json: [String: String](), headers: bearer)
        guard requested.status == 201, let requestId = requested.json["requestId"] as? String else {
            throw TestSupportError("deletion request answered \(requested.status): \(requested.text)")
        }
        let confirmed = try await harness.http.send("POST", "/api/me/deletion/\(requestId)/confirm", json: [String: String](), headers: bearer)
        guard confirmed.status == 200 else { throw TestSupportError("confirmation answered \(confirmed.status): \(confirmed.text)") }
        return confirmed.json
    }

    /// The certificate's `appleGrant` in a confirmation.
    func grant(_ confirmation: [String: Any]) throws -> [String: Any] {
        let certificate = try #require(confirmation["certificate"] as? [String: Any])
        let claims = try #require(certificate["claims"] as? [String: Any])
        return try #require(claims["appleGrant"] as? [String: Any])
    }

    /// The certificate's `appleGrant` as `GET /api/deletion-certificates/:id` answers now.
    func certificate(_ confirmation: [String: Any]) async throws -> [String: Any] {
        let certificate = try #require(confirmation["certificate"] as? [String: Any])
        let id = try #require(certificate["certificateId"] as? String)
        let reply = try await harness.http.get("/api/deletion-certificates/\(id)")
        guard reply.status == 200 else { throw TestSupportError("certificate answered \(reply.status): \(reply.text)") }
        // The token is what is signed: it verifies with Accounts' certificate keys (re-signed or
        // not), and its payload says the same as the claims shown.
        let token = try #require(reply.json["token"] as? String)
        let published = try await harness.accountsClient.call(AccountsPublicKeys.self, Empty(), principal: GatewayHarness.gateway)
        var keys: [String: Curve25519.Signing.PublicKey] = [:]
        for named in published.certificateKeys {
            keys[named.keyId] = try Curve25519.Signing.PublicKey(rawRepresentation: try #require(Data(base64Encoded: named.publicKey)))
        }
        let payload = try await Ed25519JWS.verify(token, type: DeletionCertificate.tokenType, keys: keys)
        let signed = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        let claims = try #require(reply.json["claims"] as? [String: Any])
        #expect((signed["appleGrant"] as? [String: Any])?["status"] as? String == (claims["appleGrant"] as? [String: Any])?["status"] as? String)
        return try grant(["certificate": reply.json])
    }

    /// Polls the certificate until its grant has `status` (at most 10 s).
    func waitForCertificate(_ confirmation: [String: Any], status: String) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let grant = try await certificate(confirmation)
            if grant["status"] as? String == status || ContinuousClock.now > deadline { return grant }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Waits (at most 10 s) until the grant of `code` was revoked once.
    func waitForRevocation(of code: String) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while !apple.revoked.contains(AppleTokenStandIn.refreshToken(for: code)) {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    /// A session token signed with Accounts' real key whose lifetime ended an hour ago, as an app
    /// back from the background presents it.
    static func expiredToken(userId: UUID, sessionId: UUID, appleId: String) async throws -> String {
        let key = try SessionSigningKey(id: "s1", seed: try #require(Data(base64Encoded: AppleStandIn.sessionSeed)))
        return try await SessionTokens(keys: try SessionKeySet(current: key)).issue(
            userID: userId.uuidString.lowercased(), sessionID: sessionId.uuidString.lowercased(), appleSubject: appleId,
            now: Date().addingTimeInterval(-3600)
        ).token
    }

    /// The stable `details.reason` of a 401.
    static func reason(_ reply: HTTPReply) -> String? {
        (reply.json["details"] as? [String: Any])?["reason"] as? String
    }
}
