import AppleStandIn
import Bus
import Contracts
import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension GatewayIntegration {
    /// The acceptance path as the benchmark drives it: session tokens verified by the gateway
    /// itself, acceptances gathered into batches, and revocations that still take effect.
    @Suite(.serialized) struct OneHopAcceptanceTests {
        /// How many `accept` records Audit holds for `user` (not counting sign-up's).
        static func acceptances(of user: String, in harness: GatewayHarness) async throws -> Int {
            try await harness.waitForChained()
            return try await harness.database.pool.withConnection { db in
                try db.query(
                    """
                    SELECT count(*)::bigint FROM audit.records r JOIN audit.subjects s ON s.pseudonym = r.subject
                    WHERE s.user_id = $1::uuid AND r.action = 'accept'
                    """, user)[0].decode(Int.self, column: 0)
            }
        }

        @Test func concurrentAcceptancesAreEachAnsweredAndRecordedOnce() async throws {
            try await GatewayHarness.run { harness in
                let terms = try await harness.currentTerms()
                var users: [(id: String, token: String)] = []
                for _ in 0..<24 {
                    let user = try await harness.signedUpUser()
                    users.append((user.id, user.token))
                }
                var before: [String: Int] = [:]
                for user in users { before[user.id] = try await Self.acceptances(of: user.id, in: harness) }
                // Every user accepts twice at once, each with its own key, and a third time
                // repeating the first key: 72 requests in flight together.
                let replies = try await withThrowingTaskGroup(of: (String, Int, String?, Bool?, String).self) { group in
                    for user in users {
                        for key in ["first", "second", "first"] {
                            group.addTask {
                                let reply = try await harness.http.send(
                                    "PUT", "/api/users/\(user.id)/accept-tos", json: ["tos_version": terms],
                                    headers: HTTPClient.bearer(user.token).merging(["Idempotency-Key": "\(user.id)-\(key)"]) { $1 })
                                return (
                                    user.id, reply.status, reply.json["tos_version"] as? String, reply.json["hasAcceptedTOS"] as? Bool, reply.text
                                )
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(replies.count == 72)
                for (id, status, version, accepted, text) in replies {
                    #expect(status == 200, "user \(id): \(status) \(text)")
                    #expect(version == terms && accepted == true)
                }
                for user in users {
                    // Two keys, two records: the repeated key recorded nothing new.
                    #expect(try await Self.acceptances(of: user.id, in: harness) == before[user.id]! + 2)
                }
                // A stale version is refused per item with the seed's conflict, and changes nothing.
                let user = users[0]
                let stale = try await harness.http.send(
                    "PUT", "/api/users/\(user.id)/accept-tos", json: ["tos_version": "1999-01-01"], headers: HTTPClient.bearer(user.token))
                #expect(stale.status == 409)
                #expect(try await Self.acceptances(of: user.id, in: harness) == before[user.id]! + 2)
                // Someone else's id is refused before anything is sent.
                let other = try await harness.http.send(
                    "PUT", "/api/users/\(users[1].id)/accept-tos", json: ["tos_version": terms], headers: HTTPClient.bearer(user.token))
                #expect(other.status == 403)
            }
        }

        /// A session token the gateway relayed from Accounts (sign-in, refresh, on the native and
        /// the Supabase routes) is used without the gateway checking its signature; one it did not
        /// relay is checked once, which shows the count would have moved.
        @Test func tokensIssuedThroughTheGatewayAreUsedWithoutASignatureCheck() async throws {
            let anonymousKey = try await PostgRESTTests.anonKey()
            try await GatewayHarness.run { harness in
                let appleId = "apple." + UUID().uuidString
                _ = try await harness.signedUpUser(appleId: appleId)
                func checks() async throws -> Int {
                    let text = try await harness.http.get("/metrics").text
                    let line = text.split(separator: "\n").first { $0.hasPrefix("gateway_session_signature_checks_total ") }
                    return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
                }
                func me(_ token: String) async throws -> Int {
                    try await harness.http.get("/api/me", headers: HTTPClient.bearer(token)).status
                }
                let before = try await checks()
                let signedIn = try await harness.signIn(appleId: appleId)
                #expect(try await me(try #require(signedIn["sessionToken"] as? String)) == 200)
                let refreshed = try await harness.http.send(
                    "POST", "/api/auth/refresh", json: ["refreshToken": try #require(signedIn["refreshToken"] as? String)])
                #expect(refreshed.status == 200, "\(refreshed.text)")
                #expect(try await me(try #require(refreshed.json["sessionToken"] as? String)) == 200)
                let supabase = try await harness.http.send(
                    "POST", "/auth/v1/token?grant_type=refresh_token",
                    json: ["refresh_token": try #require(refreshed.json["refreshToken"] as? String)],
                    headers: ["apikey": anonymousKey])
                #expect(supabase.status == 200, "\(supabase.text)")
                #expect(try await me(try #require(supabase.json["access_token"] as? String)) == 200)
                #expect(try await checks() == before, "a token the gateway relayed was checked again")

                // Issued by Accounts to someone else (another gateway): checked here, once.
                let elsewhere = try await harness.accountsClient.call(
                    AccountsSignInWithApple.self, .init(identityToken: try AppleStandIn.token(subject: appleId)), principal: GatewayHarness.gateway)
                #expect(try await me(elsewhere.sessionToken) == 200)
                #expect(try await me(elsewhere.sessionToken) == 200)
                #expect(try await checks() == before + 1)
            }
        }

        @Test func aSignOutThatBypassesThisGatewayStillStopsTheToken() async throws {
            try await GatewayHarness.run { harness in
                let user = try await harness.signedUpUser()
                #expect(try await harness.http.get("/api/me", headers: HTTPClient.bearer(user.token)).status == 200)
                let session = try await harness.accountsClient.call(
                    AccountsVerifySession.self, .init(sessionToken: user.token), principal: GatewayHarness.gateway)
                // Signed out at Accounts directly (another gateway, an operator): this gateway
                // learns it from Accounts' `session.revoked` event.
                _ = try await harness.accountsClient.call(
                    AccountsSignOut.self, .init(sessionId: session.sessionId), principal: GatewayHarness.gateway)
                let (status, elapsed) = try await harness.waitForStatus(401, of: "/api/me", headers: HTTPClient.bearer(user.token))
                #expect(status == 401, "still \(status) after \(elapsed)")
            }
        }

        @Test func withAccountsSilentTheGatewayStopsTrustingItsOwnView() async throws {
            try await GatewayHarness.run(gateway: ["GATEWAY_SESSION_MAX_STALENESS": "1s"]) { harness in
                let user = try await harness.signedUpUser()
                // Documents answers this route; the token is the gateway's own check.
                #expect(try await harness.http.get("/api/documents", headers: HTTPClient.bearer(user.token)).status == 200)
                await harness.stop("Accounts")
                try await Task.sleep(for: .seconds(2))
                // Past the staleness bound the gateway asks Accounts, which is down: not let through.
                let reply = try await harness.http.get("/api/documents", headers: HTTPClient.bearer(user.token))
                #expect(reply.status == 503 || reply.status == 504, "\(reply.status) \(reply.text)")
            }
        }
    }
}
