import Foundation
import GatewayTestSupport
import Locks
import TestSupport
import Testing

extension GatewayIntegration {
    /// Health, readiness, metrics, request ids, error mapping and limits, against the real gateway.
    @Suite(.serialized) struct OperationalTests {
        @Test func healthReadinessMetricsAndRequestIDs() async throws {
            try await GatewayHarness.run { harness in
                let health = try await harness.http.get("/healthz")
                #expect(health.status == 200 && health.json["status"] as? String == "ok" && health.json["service"] as? String == "gateway")
                // Ready once any backend is connected; each check turns ok as its connection comes
                // up and the next readiness round (READINESS_INTERVAL, 1 s) sees it.
                let checks = try await withTimeout(.seconds(15), "every backend connected") { () async throws -> [String: String] in
                    while true {
                        let ready = try await harness.http.get("/readyz")
                        let checks = ready.json["checks"] as? [String: String] ?? [:]
                        if ready.status == 200, !checks.isEmpty, checks.values.allSatisfy({ $0 == "ok" }) { return checks }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                }
                #expect(Set(checks.keys) == ["bus.legal", "bus.accounts", "bus.audit", "bus.documents", "backends"])
                // A request id is made up when none is sent, and a plain one sent is kept.
                #expect((health.header("X-Request-Id") ?? "").count >= 16)
                let named = try await harness.http.get("/healthz", headers: ["X-Request-Id": "client-id.42"])
                #expect(named.header("X-Request-Id") == "client-id.42")
                let spoofed = try await harness.http.get("/healthz", headers: ["X-Request-Id": "bad id\u{7f}"])
                #expect(spoofed.header("X-Request-Id") != "bad id\u{7f}")
                _ = try await harness.http.get("/api/terms")
                // Methods outside HTTP's own (WebDAV's here) share one series.
                for method in ["PROPFIND", "MKCOL", "UNLOCK"] { _ = try await harness.http.send(method, "/api/terms", body: Data()) }
                let metrics = try await harness.http.get("/metrics")
                #expect(metrics.status == 200 && metrics.text.contains("gateway_http_requests_total"))
                #expect(metrics.text.contains("route=\"/api/terms\""))
                let series = metrics.text.split(separator: "\n").filter { $0.hasPrefix("gateway_http_requests_total{") }
                #expect(series.contains { $0.contains("method=\"GET\"") && $0.contains("route=\"/api/terms\"") && $0.contains("status=\"200\"") })
                #expect(series.contains { $0.contains("method=\"other\"") && $0.hasSuffix(" 3") })
                #expect(!metrics.text.contains("PROPFIND"))
                // The bus's latencies: the gateway's calls (send to reply), and Legal's time to answer
                // them (arrival to reply), per message type.
                let lines = metrics.text.split(separator: "\n")
                #expect(lines.contains { $0.hasPrefix("bus_rpc_call_seconds_count{") && $0.contains("type=\"legal.") && !$0.hasSuffix(" 0") })
                let legal = try await HTTPClient(port: try harness.healthPort(of: "Legal")).get("/metrics").text.split(separator: "\n")
                #expect(legal.contains { $0.hasPrefix("bus_rpc_handle_seconds_count{") && $0.contains("server=\"legal\"") && !$0.hasSuffix(" 0") })
                #expect(legal.contains { $0.hasPrefix("bus_rpc_handle_seconds_bucket{") && $0.contains("le=\"+Inf\"") })
            }
        }

        /// By default the API port shows liveness only: readiness details and metrics are on the
        /// health port, for the orchestrator and the operator.
        @Test func readinessAndMetricsAreNotPublicByDefault() async throws {
            try await GatewayHarness.run(gateway: ["GATEWAY_PUBLIC_OPERATIONS": "false"]) { harness in
                #expect(try await harness.http.get("/healthz").status == 200)
                #expect(try await harness.http.get("/readyz").status == 404)
                #expect(try await harness.http.get("/metrics").status == 404)
                let metrics = try await HTTPClient(port: try harness.healthPort(of: "Gateway")).get("/metrics")
                #expect(metrics.status == 200 && metrics.text.contains("gateway_http_requests_total"))
            }
        }

        @Test func errorsAreJSONEverywhere() async throws {
            try await GatewayHarness.run { harness in
                let missing = try await harness.http.get("/no/such/route")
                #expect(missing.status == 404 && missing.json["error"] as? String == "not_found")
                #expect(missing.header("Content-Type")?.hasPrefix("application/json") == true)
                #expect((missing.json["requestId"] as? String) == missing.header("X-Request-Id"))
                // Seed routes answer {"error": message}.
                let noBody = try await harness.http.send("POST", "/api/users", body: Data(), headers: ["Content-Type": "application/json"])
                #expect(noBody.status == 401 && noBody.json["error"] is String && noBody.json["message"] == nil)
                #expect(noBody.header("WWW-Authenticate") == "Bearer")
                // Bodies: wrong media type 415, too large 413, broken JSON 400; checked before any service is called.
                let session = try await harness.signIn(appleId: "limits." + UUID().uuidString)
                let bearer = HTTPClient.bearer(session["sessionToken"] as? String ?? "")
                let xml = try await harness.http.send(
                    "POST", "/api/auth/refresh", body: Data("<a/>".utf8), headers: ["Content-Type": "application/xml"])
                #expect(xml.status == 415 && xml.json["error"] as? String == "unsupported_media_type")
                let huge = try await harness.http.send(
                    "POST", "/api/auth/refresh", json: ["refreshToken": String(repeating: "x", count: 70_000)])
                #expect(huge.status == 413 && huge.json["error"] as? String == "payload_too_large", "\(huge.status) \(huge.text)")
                let broken = try await harness.http.send(
                    "POST", "/api/auth/refresh", body: Data("{".utf8), headers: ["Content-Type": "application/json"].merging(bearer) { a, _ in a })
                #expect(broken.status == 400 && broken.json["error"] as? String == "invalid_argument")
                let missingField = try await harness.http.send("POST", "/api/auth/refresh", json: ["other": 1])
                #expect(missingField.status == 400 && (missingField.json["message"] as? String ?? "").contains("refreshToken"))
                // A token that is not one is 401, not 500.
                let garbage = try await harness.http.get("/api/me", headers: HTTPClient.bearer("not-a-token"))
                #expect(garbage.status == 401 && garbage.json["error"] as? String == "unauthenticated")
            }
        }

        /// A service that is gone answers 503 quickly; none hangs the request. (The route is the
        /// version history: the texts in effect are served from the gateway's memory instead.)
        @Test func aDeadServiceIsA503NotAHang() async throws {
            try await GatewayHarness.run { harness in
                try await waitUntilReady(harness)
                harness.kill("Legal")
                let first = try await harness.http.get(Self.legalRoute)
                // The first call after the kill may still find the connection up (heartbeats take a
                // moment to notice): then it is the deadline, 504.
                #expect([503, 504].contains(first.status))
                let http = harness.http
                let reply = try await withTimeout(.seconds(15), "the gateway noticing Legal is gone") {
                    while true {
                        let reply = try await http.get(Self.legalRoute)
                        if reply.status == 503 { return reply }
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
                #expect(reply.json["error"] is String)
                #expect(reply.header("Retry-After") == "1")
                // Only Legal's routes are down: the gateway stays in rotation, and says why.
                let ready = try await harness.http.get("/readyz")
                #expect(ready.status == 200)
                #expect((ready.json["checks"] as? [String: String])?["bus.legal"]?.hasPrefix("degraded") == true)
            }
        }

        /// Each backend stopped in turn takes down only the routes that need it (503 with
        /// Retry-After) while the others keep answering; the gateway leaves rotation only when no
        /// backend is left.
        @Test func eachBackendDownTakesOnlyItsRoutes() async throws {
            try await GatewayHarness.run { harness in
                try await waitUntilReady(harness)
                let user = try await harness.signedUpUser()
                let bearer = HTTPClient.bearer(user.token)
                // What each route needs. Sessions are checked in the gateway from Accounts' events,
                // so a signed-in route needs Accounts once that view is stale; `/api/me` is Accounts'
                // alone (its terms flags are the user's standing there); the consents routes read
                // Audit; the legal pages and /api/terms come from memory.
                let routes: [(path: String, needs: Set<String>)] = [
                    ("/api/documents", ["Documents", "Accounts"]), ("/api/me/consents", ["Audit", "Accounts"]),
                    ("/api/me", ["Accounts"]), (Self.legalRoute, ["Legal"]),
                ]
                for route in routes { #expect(try await harness.http.get(route.path, headers: bearer).status == 200, "\(route.path)") }
                var down: Set<String> = []
                for backend in ["Documents", "Audit", "Accounts", "Legal"] {
                    harness.kill(backend)
                    down.insert(backend)
                    for route in routes where route.needs.contains(backend) {
                        let http = harness.http
                        let last = LockedValue("")
                        let refused: HTTPReply
                        do {
                            refused = try await withTimeout(.seconds(20), "\(route.path) turning 503 with \(backend) down") {
                                while true {
                                    let reply = try await http.get(route.path, headers: bearer)
                                    if reply.status == 503 { return reply }
                                    last.withLock { $0 = "\(reply.status) \(reply.text.prefix(200))" }
                                    try await Task.sleep(for: .milliseconds(100))
                                }
                            }
                        } catch {
                            Issue.record("\(route.path) with \(backend) down never answered 503; last: \(last.withLock { $0 })")
                            throw error
                        }
                        #expect(refused.header("Retry-After") == "1", "\(route.path)")
                    }
                    for route in routes where route.needs.isDisjoint(with: down) {
                        let reply = try await harness.http.get(route.path, headers: bearer)
                        #expect(reply.status == 200, "\(route.path) with \(down.sorted()) down: \(reply.status) \(reply.text)")
                    }
                    let terms = try await harness.http.get("/legal/terms")
                    #expect(terms.status == 200, "the terms page with \(down.sorted()) down")
                    let ready = try await harness.http.get("/readyz")
                    #expect(ready.status == (down.count == 4 ? 503 : 200), "readiness with \(down.sorted()) down")
                }
            }
        }

        /// A service that is connected but does not answer: the bus deadline (3 s here) becomes 504.
        @Test func aStalledServiceIsA504AtTheDeadline() async throws {
            try await GatewayHarness.run { harness in
                try await waitUntilReady(harness)
                harness.signal("Legal", SIGSTOP)
                // Once stopped: a request sent before the kernel stopped every thread could still be
                // answered (a 200 in 2 s was seen once in a full run).
                try await waitUntilStopped(try #require(harness.pid(of: "Legal")))
                let started = ContinuousClock.now
                let stalled = try await harness.http.get(Self.legalRoute)
                let waited = ContinuousClock.now - started
                harness.signal("Legal", SIGCONT)
                #expect(stalled.status == 504, "\(stalled.text)")
                #expect(stalled.json["error"] is String)
                // Not before the deadline; Legal is stopped until after the answer, so only the
                // deadline can have ended the wait (504).
                #expect(waited >= .seconds(2), "\(waited)")
                let recovered = try await harness.http.get(Self.legalRoute)
                #expect(recovered.status == 200)
            }
        }

        /// A route that asks Legal on every request.
        static let legalRoute = "/api/legal/terms_of_service/versions"

        func waitUntilReady(_ harness: GatewayHarness) async throws {
            try await withTimeout(.seconds(15), "gateway readiness") {
                while try await harness.http.get("/readyz").status != 200 { try await Task.sleep(for: .milliseconds(50)) }
            }
        }
    }
}
