import AppleStandIn
import Contracts
import Foundation
import GatewayTestSupport
import TestSupport
import Testing

@testable import GatewayService
@testable import GatewaySupabase

extension SecurityTests {
    /// User A, with A's own valid session, against user B's ids on every route of the gateway's
    /// catalog: every request refused (or answering only A's own data), and B's rows and bytes
    /// unchanged afterwards.
    @Suite(.serialized) struct IsolationTests {
        /// A victim with made-up values, for checking which routes the walk covers.
        static let placeholder = IsolationVictim(
            user: .init(id: UUID().uuidString.lowercased(), token: "t"), appleId: "apple.x", documentId: UUID().uuidString.lowercased(),
            bytes: Data(), fileUrl: "documents/x/a.bin", encodedFileUrl: "documents%2Fx%2Fa%2Ebin", objectPath: "x/a.bin",
            uploadPath: "/api/uploads/x", uploadOffset: 0, shareLinkId: "l", shareURL: "/api/shared/t", deletionRequestId: "r")

        /// What is wrong with the walk's coverage of `catalog` (route → public?): routes neither
        /// walked nor listed as public, routes listed as public that need a credential, and
        /// walked or listed routes the catalog no longer has.
        static func coverageProblems(catalog: [String: Bool], walked: Set<String>, publicRoutes: [String: String]) -> [String] {
            var problems: [String] = []
            for (route, isPublic) in catalog.sorted(by: { $0.key < $1.key }) where !walked.contains(route) {
                if publicRoutes[route] == nil {
                    problems.append("\(route) is in the gateway's route catalog but neither walked with A's token nor listed as public with a reason")
                } else if !isPublic {
                    problems.append("\(route) is listed as public in the walk but needs a credential: walk it")
                }
            }
            for route in walked.union(publicRoutes.keys).sorted() where catalog[route] == nil {
                problems.append("\(route) is in the walk but not in the catalog (renamed or removed?)")
            }
            return problems
        }

        @Test func everyCatalogRouteIsWalkedOrPublicWithAReason() throws {
            let catalog = try RouteCatalogSnapshot.routes()
            let walked = Set(IsolationWalk.probes(victim: Self.placeholder, terms: "1", privacy: "1").keys)
            #expect(catalog.count >= 50, "the catalog looks incomplete: \(catalog.count) routes")
            let problems = Self.coverageProblems(catalog: catalog, walked: walked, publicRoutes: IsolationWalk.publicRoutes)
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
            // The check itself catches a route added without a walk, a credentialed route
            // exempted as public, and a stale entry.
            var grown = catalog
            grown["GET /api/documents/:reference/thumbnail"] = false
            grown["GET /api/terms"] = false
            #expect(Self.coverageProblems(catalog: grown, walked: walked, publicRoutes: IsolationWalk.publicRoutes).count == 2)
            #expect(
                Self.coverageProblems(catalog: catalog.filter { $0.key != "GET /healthz" }, walked: walked, publicRoutes: IsolationWalk.publicRoutes)
                    .count == 1)
            print(
                "SECURITY isolation coverage: \(catalog.count) catalog routes = \(walked.count) walked + \(catalog.count - walked.count) public with a reason"
            )
        }

        @Test func userACannotReadListDownloadShareDeleteOrAcceptForUserB() async throws {
            try await GatewayHarness.run { harness in
                let aAppleId = "apple.attacker." + UUID().uuidString
                let (aId, aToken, _) = try await harness.signedUpUser(appleId: aAppleId)
                let a = GatewayHarness.User(id: aId, token: aToken)
                let b = try await IsolationVictim.make(harness)
                let terms = try await harness.currentTerms()
                let privacy = try await harness.legalClient.call(LegalCurrent.self, .init(type: .privacyPolicy)).summary.version
                let viewBefore = try await b.view(harness)
                #expect(viewBefore["content"] == "200 \(GatewayHarness.sha256(b.bytes))")
                #expect(viewBefore["upload"] == "200 \(b.uploadOffset)" || viewBefore["upload"] == "204 \(b.uploadOffset)")
                let rowsBefore = try await b.rows(harness)
                #expect(rowsBefore["documents"]?.count == 2 && rowsBefore["share_links"]?.count == 2)
                #expect(rowsBefore["deletion_requests"]?.count == 1 && (rowsBefore["audit_records"]?.count ?? 0) >= 2)

                // A's credentials: the session (the real attack), A's own Apple identity token
                // (accepted by the seed routes), and the public anon key. Routes refuse the last
                // two with 401/403 where they need a session.
                let anonKey = try await #require(AnonymousKey(secret: GatewayHarness.jwtSecret)).issue()
                let credentials: [(name: String, token: String, alsoRefused: Set<Int>)] = [
                    ("session", a.token, []), ("Apple identity token", try AppleStandIn.token(subject: aAppleId), [401, 403]),
                    ("anon key", anonKey, [401, 403]),
                ]
                var requests = 0
                var statuses: [String: [Int: Int]] = [:]
                let probes = IsolationWalk.probes(victim: b, terms: terms, privacy: privacy)
                for credential in credentials {
                    var token = credential.token
                    for (route, list) in probes.sorted(by: { $0.key < $1.key }) {
                        for probe in list {
                            var headers = HTTPClient.bearer(token).merging(probe.headers) { _, new in new }
                            if probe.path.hasPrefix("/rest/v1/") { headers["apikey"] = token }
                            let json: Any? = probe.json.map { $0 as Any } ?? probe.jsonArray.map { $0 as Any }
                            let reply = try await harness.http.send(probe.method, probe.path, json: json, body: probe.body, headers: headers)
                            requests += 1
                            statuses[credential.name, default: [:]][reply.status, default: 0] += 1
                            let what =
                                "\(credential.name) → \(route): \(probe.method) \(probe.path) answered \(reply.status) \(reply.text.prefix(300))"
                            if probe.refused.isEmpty {
                                #expect(reply.status < 500, "\(what)")
                            } else {
                                #expect(probe.refused.union(credential.alsoRefused).contains(reply.status), "\(what)")
                            }
                            let text = reply.text.lowercased()
                            for secret in probe.mustNotContain where text.contains(secret.lowercased()) {
                                Issue.record("\(what): the reply contains B's \(secret)")
                            }
                            if reply.status >= 400, probe.method != "HEAD" {
                                #expect(!reply.json.isEmpty, "\(what): the refusal has no JSON error body")
                            }
                            if probe.endsSession, credential.name == "session", reply.status < 300 {
                                #expect(
                                    try await harness.http.get("/api/me", headers: HTTPClient.bearer(token)).status == 401,
                                    "\(what): A's session still works")
                                token = try #require(try await harness.signIn(appleId: aAppleId)["sessionToken"] as? String)
                                // Declining stands until A accepts again (the gateway refuses the
                                // routes that need the terms): accept, so the walk goes on testing isolation.
                                let accepted = try await harness.http.send(
                                    "POST", "/api/me/consents/terms_of_service/accept", json: ["version": terms], headers: HTTPClient.bearer(token))
                                #expect(accepted.status == 201, "\(what): accepting again answered \(accepted.status)")
                            }
                        }
                    }
                }

                let rowsAfter = try await b.rows(harness)
                for (table, rows) in rowsBefore.sorted(by: { $0.key < $1.key }) {
                    #expect(rowsAfter[table] == rows, "B's \(table) changed during the walk")
                }
                let viewAfter = try await b.view(harness)
                #expect(viewAfter == viewBefore, "B's view changed: \(viewBefore) → \(viewAfter)")
                // B's own share link still works (and the pending deletion is still B's to cancel).
                #expect(try await harness.http.get(b.shareURL).body == b.bytes)
                #expect(try await harness.http.send("DELETE", "/api/me/deletion/\(b.deletionRequestId)", headers: b.user.auth).status == 204)
                let routes = probes.count
                print(
                    "SECURITY isolation: \(requests) requests by A (session, Apple identity token, anon key) on B's ids over \(routes) catalog routes (\(IsolationWalk.publicRoutes.count) public routes listed with reasons); statuses \(statuses.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " "))" }.joined(separator: "; ")); B's rows in \(rowsBefore.count) tables unchanged"
                )
            }
        }
    }
}
