import Bus
import Contracts
import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension GatewayIntegration {
    /// The gateway's in-memory copy of the legal texts, against the real executables: a version
    /// published through the operator path reaches every route that serves the texts in effect
    /// without a restart, `ETag`s follow it, a version published for later takes over at its time,
    /// a lost event is made up by the periodic revalidation, and with Legal stopped the last texts
    /// are still served, marked stale.
    @Suite(.serialized) struct LegalTextsCacheTests {
        /// What the gateway's README promises: a published version is served within
        /// `GATEWAY_LEGAL_REFRESH` (5 s by default) plus one round trip to Legal (at most the
        /// bus deadline, 3 s in the harness), however its event fared.
        static let bound: Duration = .seconds(5 + 3)

        static let terms = "/api/legal/terms_of_service"
        static let page = "/legal/terms"

        /// The terms version each route that serves the texts in effect answers with now.
        static func servedVersions(_ harness: GatewayHarness, anon: String) async throws -> [String: String] {
            let http = harness.http
            var served: [String: String] = [:]
            served["/api/terms"] = try await http.get("/api/terms").json["version"] as? String
            served[terms] = (try await http.get(terms).json["summary"] as? [String: Any])?["version"] as? String
            served[terms + "/outline"] = try await http.get(terms + "/outline").json["version"] as? String
            served[page] = pageVersion(try await http.get(page).text)
            let rest = try await http.get(
                "/rest/v1/legal_documents?select=version&type=eq.terms_of_service",
                headers: PostgRESTTests.keys(anon).merging(["Accept": "application/vnd.pgrst.object+json"]) { a, _ in a })
            served["/rest/v1/legal_documents"] = rest.json["version"] as? String
            return served
        }

        /// The version a page shows under its title (`Last Updated: … · Version 1.0`).
        static func pageVersion(_ html: String) -> String? {
            guard let start = html.range(of: " · Version ")?.upperBound, let end = html[start...].range(of: "</p>")?.lowerBound else { return nil }
            return String(html[start..<end])
        }

        /// Polls until every route serves `version`; how long that took.
        @discardableResult
        static func waitUntilServed(_ version: String, _ harness: GatewayHarness, anon: String, within limit: Duration) async throws -> Duration {
            let started = ContinuousClock.now
            let served = try await withTimeout(limit, "every route serving \(version)") {
                while true {
                    let served = try await servedVersions(harness, anon: anon)
                    if served.count == 5, served.values.allSatisfy({ $0 == version }) { return served }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            #expect(served.count == 5)
            return ContinuousClock.now - started
        }

        static func publish(_ harness: GatewayHarness, _ version: String, effectiveAt: Date? = nil) async throws -> (LegalVersionSummary, String) {
            let content = "# Terms and Conditions\n\n## 1. Version \(version)\n\nPublished by the cache tests (\(UUID().uuidString)).\n"
            let summary = try await harness.legalClient.call(
                LegalPublish.self, .init(type: .termsOfService, version: version, content: content, effectiveAt: effectiveAt, material: true),
                principal: .operator("tests"), timeout: .seconds(10))
            return (summary, content)
        }

        @Test func publishedVersionsReachEveryRouteAndTheLastTextsOutliveLegal() async throws {
            let anon = try await PostgRESTTests.anonKey()
            try await GatewayHarness.run { harness in
                let http = harness.http
                try await Self.waitUntilServed(try await harness.currentTerms(), harness, anon: anon, within: .seconds(15))
                let before = try await http.get(Self.terms)
                let oldTag = try #require(before.header("ETag"))
                let oldPageTag = try #require(try await http.get(Self.page).header("ETag"))
                #expect(before.header("X-Compass-Stale") == nil)
                #expect(try await http.get(Self.terms, headers: ["If-None-Match": oldTag]).status == 304)
                #expect(try await http.get(Self.page, headers: ["If-None-Match": oldPageTag]).status == 304)

                // Published through the operator path: served by every route, no restart.
                let (published, content) = try await Self.publish(harness, "2.0-cached")
                let took = try await Self.waitUntilServed("2.0-cached", harness, anon: anon, within: Self.bound)
                print("LEGAL CACHE a published version was served by all 5 routes \(took) after legal.publish answered (bound \(Self.bound))")
                #expect(try await http.get("/api/terms").json["content"] as? String == content)
                let newTag = "\"\(published.digest)\""
                // The old ETag now gets the new body (200); the new one gets 304, weak or strong.
                let changed = try await http.get(Self.terms, headers: ["If-None-Match": oldTag])
                #expect(changed.status == 200 && changed.header("ETag") == newTag && changed.json["content"] as? String == content)
                #expect(try await http.get(Self.terms, headers: ["If-None-Match": newTag]).status == 304)
                #expect(try await http.get(Self.terms + "/outline", headers: ["If-None-Match": "W/" + newTag]).status == 304)
                let changedPage = try await http.get(Self.page, headers: ["If-None-Match": oldPageTag])
                #expect(changedPage.status == 200 && changedPage.header("ETag") == newTag && changedPage.text.contains("Version 2.0-cached"))
                let notModified = try await http.get(Self.page, headers: ["If-None-Match": newTag])
                #expect(notModified.status == 304 && notModified.body.isEmpty && notModified.header("Content-Security-Policy") != nil)

                // A version published for later: the current one is served until that instant,
                // the new one from then on (each reply's receipt time bounds when it was decided).
                let effectiveAt = Date(timeIntervalSince1970: ((Date().timeIntervalSince1970 + 3) * 1000).rounded(.down) / 1000)
                _ = try await Self.publish(harness, "2.1-later", effectiveAt: effectiveAt)
                let polls = try await withTimeout(.seconds(3) + Self.bound, "the version published for later to take effect") {
                    var polls: [(received: Date, version: String)] = []
                    while polls.last?.version != "2.1-later" {
                        let version = try await http.get("/api/terms").json["version"] as? String ?? "?"
                        polls.append((Date(), version))
                        try await Task.sleep(for: .milliseconds(25))
                    }
                    return polls
                }
                #expect(polls.filter { $0.received < effectiveAt }.allSatisfy { $0.version == "2.0-cached" })
                #expect(polls.contains { $0.received < effectiveAt }, "no reply came before the version took effect")
                try await Self.waitUntilServed("2.1-later", harness, anon: anon, within: Self.bound)

                // Legal stopped: the pages and the JSON routes answer from memory, marked stale;
                // a read that needs Legal (the history) is 503.
                await harness.stop("Legal")
                try await withTimeout(.seconds(15), "the stale marker") {
                    while try await http.get("/api/terms").header("X-Compass-Stale") != "true" { try await Task.sleep(for: .milliseconds(50)) }
                }
                for path in ["/api/terms", Self.terms, Self.terms + "/outline", Self.page, "/legal/privacy", "/api/legal/privacy_policy"] {
                    let reply = try await http.get(path)
                    #expect(reply.status == 200 && reply.header("X-Compass-Stale") == "true", "\(path): \(reply.status)")
                }
                #expect(try await Self.servedVersions(harness, anon: anon).values.allSatisfy { $0 == "2.1-later" })
                let staleTag = try #require(try await http.get(Self.page).header("ETag"))
                let staleNotModified = try await http.get(Self.page, headers: ["If-None-Match": staleTag])
                #expect(staleNotModified.status == 304 && staleNotModified.header("X-Compass-Stale") == "true")
                #expect(try await http.get(Self.terms + "/versions").status == 503)
            }
        }

        /// No event reaches this gateway (its events address has no publisher), as when pub/sub
        /// drops one: the periodic revalidation still serves a published version within
        /// `GATEWAY_LEGAL_REFRESH` plus one round trip.
        @Test func aLostEventIsMadeUpByThePeriodicRevalidation() async throws {
            let anon = try await PostgRESTTests.anonKey()
            let refresh = Duration.seconds(1)
            try await GatewayHarness.run(gateway: ["LEGAL_EVENTS_ENDPOINTS": ipcEndpoint(), "GATEWAY_LEGAL_REFRESH": "1s"]) { harness in
                try await Self.waitUntilServed(try await harness.currentTerms(), harness, anon: anon, within: .seconds(15))
                _ = try await Self.publish(harness, "3.0-no-event")
                let took = try await Self.waitUntilServed("3.0-no-event", harness, anon: anon, within: refresh + .seconds(3))
                print("LEGAL CACHE without events a published version was served \(took) after legal.publish answered (GATEWAY_LEGAL_REFRESH=1s)")
                let metrics = try await harness.http.get("/metrics").text
                #expect(
                    metrics.contains("gateway_legal_cache_refreshes_total{reason=\"interval\",result=\"ok\"}")
                        || metrics.contains("gateway_legal_cache_refreshes_total{result=\"ok\",reason=\"interval\"}"), "\(metrics.prefix(400))")
                #expect(!metrics.contains("gateway_legal_cache_events_total{outcome=\"applied\"}"))
                // It came from the gateway's copy, not from asking Legal per request.
                await harness.stop("Legal")
                let served = try await harness.http.get("/api/terms")
                #expect(served.status == 200 && served.json["version"] as? String == "3.0-no-event")
            }
        }
    }
}
