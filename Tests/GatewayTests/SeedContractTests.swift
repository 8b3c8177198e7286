import AppleStandIn
import Contracts
import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension GatewayIntegration {
    /// Seed 004's routes and its "Testing Instructions", through the real gateway and services.
    @Suite(.serialized) struct SeedContractTests {
        /// The seed client's `TOSResponse` and `ErrorResponse`, as it decodes them.
        struct TOSResponse: Codable {
            let content: String
            let version: String
        }
        struct ErrorResponse: Codable { let error: String }
        /// A `User` model as the seed's client could write it (no coding keys): it must decode.
        struct SeedUser: Codable {
            let id: UUID
            let username: String?
            let hasConfirmedEligibility: Bool
            let hasAcceptedTOS: Bool
        }

        @Test func termsAreTheCurrentVersionInTheSeedShape() async throws {
            try await GatewayHarness.run { harness in
                let reply = try await harness.http.get("/api/terms")
                #expect(reply.status == 200)
                let terms = try JSONDecoder().decode(TOSResponse.self, from: reply.body)
                #expect(terms.version == "2025-12-12")
                #expect(terms.content.contains("##"))
                #expect(Set(reply.json.keys) == ["content", "version"])
            }
        }

        /// Test 1 (allowed state), then test 3 (the existing user skips eligibility and terms), with
        /// a session token as the credential.
        @Test func allowedStateThenExistingUserWithASession() async throws {
            try await GatewayHarness.run { harness in
                let appleId = "001122.allowed." + UUID().uuidString
                let session = try await harness.signIn(appleId: appleId)
                let bearer = HTTPClient.bearer(session["sessionToken"] as? String ?? "")
                // Sign-in: no compliance fields; the unconfirmed user (nil id) sends the app to eligibility.
                let first = try await harness.http.send(
                    "POST", "/api/users", json: ["apple_id": appleId, "email": NSNull(), "name": NSNull()], headers: bearer)
                #expect(first.status == 200)
                let unconfirmed = try JSONDecoder().decode(SeedUser.self, from: first.body)
                #expect(!unconfirmed.hasConfirmedEligibility)
                #expect(try await harness.userCount() == 0)
                // Eligibility view: Alabama, certified, the terms version the app hard-codes.
                let created = try await harness.http.send(
                    "POST", "/api/users",
                    json: [
                        "apple_id": appleId, "email": "alex@example.com", "name": "Alex Athlete", "state": "AL",
                        "eligibility_certified": true, "tos_version": "2025-12-12",
                    ],
                    headers: bearer.merging(["User-Agent": "PlayoffChallenge/1.0", "X-Forwarded-For": "203.0.113.77"]) { a, _ in a })
                #expect(created.status == 200)
                let user = try JSONDecoder().decode(SeedUser.self, from: created.body)
                #expect(user.hasConfirmedEligibility)
                #expect(created.json["state"] as? String == "AL" && created.json["email"] as? String == "alex@example.com")
                #expect(created.json["eligibility_confirmed_at"] is String && created.json["tos_accepted_at"] is String)
                // The terms view: accept.
                let accept = try await harness.http.send(
                    "PUT", "/api/users/\(user.id.uuidString)/accept-tos", json: ["tos_version": "2025-12-12"], headers: bearer)
                #expect((200...299).contains(accept.status))
                // Test 3: relaunch, sign in again: the existing user, eligibility and terms done.
                let again = try await harness.http.send(
                    "POST", "/api/users", json: ["apple_id": appleId, "email": NSNull(), "name": NSNull()], headers: bearer)
                let existing = try JSONDecoder().decode(SeedUser.self, from: again.body)
                #expect(existing.id == user.id && existing.hasConfirmedEligibility && existing.hasAcceptedTOS)
                #expect(try await harness.userCount() == 1)
                // Audit holds the consent with the client IP the trusted proxy (127.0.0.1) forwarded.
                let history = try await harness.auditClient.call(AuditHistory.self, .init(userId: user.id), principal: .service("tests"))
                #expect(history.records.contains { $0.clientIP == "203.0.113.77" && $0.userAgent == "PlayoffChallenge/1.0" })
                #expect(history.records.count == 2)
            }
        }

        /// Test 2: a restricted state is refused with the seed's message, and no user is created.
        @Test func restrictedStateIsRefusedAndCreatesNoUser() async throws {
            try await GatewayHarness.run { harness in
                let appleId = "001122.nevada." + UUID().uuidString
                let token = try AppleStandIn.token(subject: appleId)
                let reply = try await harness.http.send(
                    "POST", "/api/users",
                    json: [
                        "apple_id": appleId, "email": "nv@example.com", "name": "Nev", "state": "NV", "eligibility_certified": true,
                        "tos_version": "2025-12-12",
                    ],
                    headers: HTTPClient.bearer(token))
                #expect(reply.status == 403)
                #expect(try JSONDecoder().decode(ErrorResponse.self, from: reply.body).error == "Fantasy contests are not available in your state")
                #expect(try await harness.userCount() == 0)
                // Other refusals keep the {"error": …} shape: no certification is 400.
                let uncertified = try await harness.http.send(
                    "POST", "/api/users", json: ["apple_id": appleId, "state": "AL", "eligibility_certified": false, "tos_version": "2025-12-12"],
                    headers: HTTPClient.bearer(token))
                #expect(uncertified.status == 400 && uncertified.json["error"] is String)
                #expect(try await harness.userCount() == 0)
            }
        }

        /// Credentials: none is 401 by default; a token of another Apple id or user is 403; the Apple
        /// identity token works for the owner.
        @Test func aCallerActsOnlyForThemselves() async throws {
            try await GatewayHarness.run { harness in
                let mine = try await harness.signedUpUser()
                let theirs = try await harness.signedUpUser()
                let terms = try await harness.currentTerms()
                let anonymous = try await harness.http.send("PUT", "/api/users/\(mine.id)/accept-tos", json: ["tos_version": terms])
                #expect(anonymous.status == 401 && anonymous.json["error"] is String)
                let other = try await harness.http.send(
                    "PUT", "/api/users/\(theirs.id)/accept-tos", json: ["tos_version": terms], headers: HTTPClient.bearer(mine.token))
                #expect(other.status == 403)
                let otherAppleId = try await harness.http.send(
                    "POST", "/api/users", json: ["apple_id": "someone.else"], headers: HTTPClient.bearer(mine.token))
                #expect(otherAppleId.status == 403)
                let forged = try await harness.http.send(
                    "POST", "/api/users", json: ["apple_id": "forged"],
                    headers: HTTPClient.bearer(try AppleStandIn.token(subject: "forged", signer: AppleStandIn.otherKey)))
                #expect(forged.status == 401)
                let notUUID = try await harness.http.send(
                    "PUT", "/api/users/12/accept-tos", json: ["tos_version": terms], headers: HTTPClient.bearer(mine.token))
                #expect(notUUID.status == 400)
                let stale = try await harness.http.send(
                    "PUT", "/api/users/\(mine.id)/accept-tos", json: ["tos_version": "0.1"], headers: HTTPClient.bearer(mine.token))
                #expect(stale.status == 409 && stale.json["error"] is String)
            }
        }

        /// An Apple identity token is a credential on both write routes: sign-up, then accept-tos
        /// for the account it names (and no other).
        @Test func appleIdentityTokensActForTheirOwnAccount() async throws {
            try await GatewayHarness.run { harness in
                let appleId = "001122.apple." + UUID().uuidString
                let bearer = HTTPClient.bearer(try AppleStandIn.token(subject: appleId))
                let created = try await harness.http.send(
                    "POST", "/api/users",
                    json: [
                        "apple_id": appleId, "email": "ap@example.com", "name": "Ap", "state": "GA", "eligibility_certified": true,
                        "tos_version": "2025-12-12",
                    ],
                    headers: bearer)
                let user = try JSONDecoder().decode(SeedUser.self, from: created.body)
                let accept = try await harness.http.send(
                    "PUT", "/api/users/\(user.id.uuidString)/accept-tos", json: ["tos_version": "2025-12-12"], headers: bearer)
                #expect(accept.status == 200 && accept.json["hasAcceptedTOS"] as? Bool == true)
                let someoneElse = try await harness.signedUpUser()
                let forbidden = try await harness.http.send(
                    "PUT", "/api/users/\(someoneElse.id)/accept-tos", json: ["tos_version": "2025-12-12"], headers: bearer)
                #expect(forbidden.status == 403 && forbidden.json["error"] is String)
            }
        }

        /// The legacy-client setting lets the seed's client work exactly as written.
        @Test func legacyClientsWorkWithoutCredentialsWhenEnabled() async throws {
            try await GatewayHarness.run(gateway: ["GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS": "true", "LOG_LEVEL": "info"]) { harness in
                let appleId = "legacy." + UUID().uuidString
                let unconfirmed = try await harness.http.send("POST", "/api/users", json: ["apple_id": appleId, "email": NSNull(), "name": NSNull()])
                #expect(unconfirmed.status == 200 && unconfirmed.json["hasConfirmedEligibility"] as? Bool == false)
                let created = try await harness.http.send(
                    "POST", "/api/users",
                    json: [
                        "apple_id": appleId, "email": NSNull(), "name": NSNull(), "state": "TX", "eligibility_certified": true,
                        "tos_version": "2025-12-12",
                    ])
                let user = try JSONDecoder().decode(SeedUser.self, from: created.body)
                let accept = try await harness.http.send("PUT", "/api/users/\(user.id.uuidString)/accept-tos", json: ["tos_version": "2025-12-12"])
                #expect(accept.status == 200)
                #expect(harness.output(of: "Gateway").contains("GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS is ON"))
            }
        }
    }
}
