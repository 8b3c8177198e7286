import AppleStandIn
import Contracts
import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension GatewayIntegration {
    /// Rate limits against the real gateway and services: 429 with `Retry-After` in each route
    /// family's error shape, nothing reaching a service or stored, recovery after `Retry-After`,
    /// per-user budgets that only a verified session can spend, and client addresses taken from
    /// `X-Forwarded-For` only when a trusted proxy sends it.
    @Suite(.serialized) struct RateLimitTests {
        static func sessionCount(_ harness: GatewayHarness) async throws -> Int {
            try await harness.database.pool.withConnection { db in
                try db.query("SELECT count(*)::bigint FROM accounts.sessions")[0].decode(Int.self, column: 0)
            }
        }

        @Test func signInIsLimitedPerAddressAnsweredWithRetryAfterAndRecovers() async throws {
            // Three attempts per address, then one every 2 s.
            try await GatewayHarness.run(gateway: ["GATEWAY_RATE_LIMIT_SIGN_IN_PER_IP": "3/6s,burst=3"]) { harness in
                // Three attempts (bad bodies, so they are quick) spend the address's burst.
                for _ in 0..<3 {
                    #expect(try await harness.http.send("POST", "/api/auth/apple", json: [String: String]()).status == 400)
                }
                let refused = try await harness.http.send("POST", "/api/auth/apple", json: ["identityToken": try AppleStandIn.token(subject: "rl.a")])
                #expect(refused.status == 429)
                let retryAfter = try #require(refused.header("Retry-After").flatMap(Int.init), "\(refused.headers)")
                #expect((1...2).contains(retryAfter))
                #expect(refused.json["error"] as? String == "rate_limited" && refused.json["requestId"] is String, "\(refused.text)")
                #expect((refused.json["details"] as? [String: Any])?["rule"] as? String == "sign_in_per_ip")
                // Seed 004's sign-up is a sign-in too, refused in the seed's shape.
                let seed = try await harness.http.send("POST", "/api/users", json: ["apple_id": "rl.a"])
                #expect(seed.status == 429 && seed.header("Retry-After") != nil)
                #expect((seed.json["error"] as? String)?.hasPrefix("too many requests") == true && seed.json.count == 1, "\(seed.text)")
                // The refused sign-in reached no service: no session was made.
                #expect(try await Self.sessionCount(harness) == 0)
                // Another client behind the trusted proxy (127.0.0.1 in the harness) has its own budget.
                let forwarded = try await harness.http.send(
                    "POST", "/api/auth/apple", json: ["identityToken": try AppleStandIn.token(subject: "rl.b")],
                    headers: ["X-Forwarded-For": "198.51.100.20"])
                #expect(forwarded.status == 200, "\(forwarded.text)")
                #expect(try await Self.sessionCount(harness) == 1)
                // Waiting Retry-After is enough.
                try await Task.sleep(for: .seconds(retryAfter))
                let recovered = ContinuousClock.now
                _ = try await harness.signIn(appleId: "rl.a")
                #expect(try await Self.sessionCount(harness) == 2)
                let metrics = try await harness.http.get("/metrics")
                #expect(
                    metrics.text.contains("gateway_rate_limited_total{rule=\"sign_in_per_ip\"} 2"),
                    "\(metrics.text.split(separator: "\n").filter { $0.contains("rate_limited") })")
                print(
                    "RATE-LIMIT sign-in per address 3/6s,burst=3: 4th attempt 429 Retry-After \(retryAfter) s; sessions made by refused requests 0; "
                        + "forwarded client 200; allowed again after waiting Retry-After (sign-in took \(ContinuousClock.now - recovered))")
            }
        }

        @Test func signInIsLimitedPerVerifiedAppleIdFromAnyAddress() async throws {
            try await GatewayHarness.run(gateway: ["GATEWAY_RATE_LIMIT_SIGN_IN_PER_USER": "2/60s,burst=2"]) { harness in
                var statuses: [Int] = []
                // One Apple id from three addresses (the harness trusts 127.0.0.1 as a proxy).
                for index in 1...3 {
                    let reply = try await harness.http.send(
                        "POST", "/api/auth/apple", json: ["identityToken": try AppleStandIn.token(subject: "rl.person")],
                        headers: ["X-Forwarded-For": "198.51.100.\(index)"])
                    statuses.append(reply.status)
                    if reply.status == 429 {
                        #expect((reply.json["details"] as? [String: Any])?["rule"] as? String == "sign_in_per_user", "\(reply.text)")
                    }
                }
                #expect(statuses == [200, 200, 429])
                // Tokens that do not verify name nobody: they cannot spend another person's budget.
                let forged = try AppleStandIn.token(subject: "rl.other", audience: "com.example.someone-else")
                for _ in 0..<3 { #expect(try await harness.http.send("POST", "/api/auth/apple", json: ["identityToken": forged]).status == 401) }
                let other = try await harness.http.send(
                    "POST", "/api/auth/apple", json: ["identityToken": try AppleStandIn.token(subject: "rl.other")])
                #expect(other.status == 200, "\(other.text)")
                print(
                    "RATE-LIMIT sign-in per Apple id 2/60s,burst=2 from 3 addresses: statuses \(statuses); 3 unverifiable tokens for another id: 401, then its own sign-in \(other.status)"
                )
            }
        }

        @Test func acceptancesAreLimitedPerVerifiedUserAndStoreNothingWhenRefused() async throws {
            try await GatewayHarness.run(gateway: ["GATEWAY_RATE_LIMIT_ACCEPT_PER_USER": "2/60s,burst=2"]) { harness in
                let a = try await harness.signedUpUser()
                let b = try await harness.signedUpUser()
                let terms = try await harness.currentTerms()
                let privacy = try await harness.legalClient.call(LegalCurrent.self, .init(type: .privacyPolicy)).summary.version
                func records(_ user: String) async throws -> Int {
                    try await harness.auditClient.call(AuditHistory.self, .init(userId: UUID(uuidString: user)!), principal: .service("tests"))
                        .records.count
                }
                let aBefore = try await records(a.id)
                for _ in 0..<2 {
                    let accepted = try await harness.http.send(
                        "PUT", "/api/users/\(a.id)/accept-tos", json: ["tos_version": terms], headers: HTTPClient.bearer(a.token))
                    #expect(accepted.status == 200, "\(accepted.text)")
                }
                // A's third write on any acceptance route is refused, each in its family's shape.
                let seed = try await harness.http.send(
                    "PUT", "/api/users/\(a.id)/accept-tos", json: ["tos_version": terms], headers: HTTPClient.bearer(a.token))
                #expect(seed.status == 429 && seed.json.keys.sorted() == ["error"], "\(seed.text)")
                let retryAfter = try #require(seed.header("Retry-After").flatMap(Int.init))
                #expect((1...30).contains(retryAfter))
                let native = try await harness.http.send(
                    "POST", "/api/me/consents/privacy_policy/acknowledge", json: ["version": privacy], headers: HTTPClient.bearer(a.token))
                #expect(
                    native.status == 429 && native.json["error"] as? String == "rate_limited" && native.header("Retry-After") != nil, "\(native.text)"
                )
                let anon = try await PostgRESTTests.anonKey()
                let rest = try await harness.http.send(
                    "POST", "/rest/v1/legal_acceptances", json: ["user_id": a.id, "document_type": "privacy_policy", "version": privacy],
                    headers: PostgRESTTests.keys(anon, bearer: a.token))
                #expect(rest.status == 429 && rest.json["code"] as? String == "PGRST-rate_limited" && rest.json["message"] is String, "\(rest.text)")
                // Nothing of the refused writes was stored.
                let aAfter = try await records(a.id)
                #expect(aAfter == aBefore + 2)
                // Requests naming B with a bad token fail authentication and spend no budget of B's
                // (they count against the address, which has no limit here).
                for _ in 0..<5 {
                    let forged = try await harness.http.send(
                        "PUT", "/api/users/\(b.id)/accept-tos", json: ["tos_version": terms], headers: HTTPClient.bearer("not.a.token"))
                    #expect(forged.status == 401)
                }
                // B is unaffected by A's limit and by the forged requests: two writes go through.
                let bBefore = try await records(b.id)
                for _ in 0..<2 {
                    let accepted = try await harness.http.send(
                        "POST", "/api/me/consents/privacy_policy/acknowledge", json: ["version": privacy], headers: HTTPClient.bearer(b.token))
                    #expect(accepted.status == 201, "\(accepted.text)")
                }
                let bAfter = try await records(b.id)
                #expect(bAfter == bBefore + 2)
                print(
                    "RATE-LIMIT accept per user 2/60s,burst=2: A 2×200 then seed/native/PostgREST 429 (Retry-After \(retryAfter) s); "
                        + "A's audit records \(aBefore) → \(aAfter) (3 refused writes stored 0); 5 forged-token requests for B: 401; B \(bBefore) → \(bAfter)"
                )
            }
        }

        @Test func untrustedClientsCannotDodgeTheLimitWithForwardedFor() async throws {
            // 127.0.0.1 is not a trusted proxy here, so its X-Forwarded-For is ignored.
            try await GatewayHarness.run(gateway: ["GATEWAY_TRUSTED_PROXIES": "10.9.9.9", "GATEWAY_RATE_LIMIT_SIGN_IN_PER_IP": "2/60s,burst=2"]) {
                harness in
                var statuses: [Int] = []
                for index in 1...4 {
                    let reply = try await harness.http.send(
                        "POST", "/api/auth/refresh", json: ["refreshToken": "not-a-refresh-token"], headers: ["X-Forwarded-For": "203.0.113.\(index)"]
                    )
                    statuses.append(reply.status)
                }
                #expect(statuses[0] != 429 && statuses[1] != 429 && statuses[2] == 429 && statuses[3] == 429, "\(statuses)")
                print("RATE-LIMIT untrusted X-Forwarded-For rotated over 4 addresses, limit 2/60s,burst=2: statuses \(statuses)")

                // The OpenAPI document declares the 429 and its Retry-After on every limited route.
                let document = try await harness.http.get("/openapi.json")
                let paths = try #require(document.json["paths"] as? [String: [String: Any]])
                for (method, path) in [
                    ("post", "/api/auth/apple"), ("post", "/api/auth/refresh"), ("post", "/api/users"), ("put", "/api/users/{id}/accept-tos"),
                    ("post", "/api/me/consents/{type}/{action}"), ("post", "/rest/v1/legal_acceptances"),
                ] {
                    let responses = (paths[path]?[method] as? [String: Any])?["responses"] as? [String: Any]
                    let tooMany = responses?["429"] as? [String: Any]
                    #expect((tooMany?["headers"] as? [String: Any])?["Retry-After"] != nil, "\(method) \(path) declares no 429 with Retry-After")
                }
                #expect(((paths["/api/terms"]?["get"] as? [String: Any])?["responses"] as? [String: Any])?["429"] == nil)
            }
        }
    }
}
