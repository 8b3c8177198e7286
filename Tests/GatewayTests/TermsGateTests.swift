import Bus
import Contracts
import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension GatewayIntegration {
    /// The server's enforcement of the terms, through the real executables: routes that need the
    /// terms in effect accepted answer `403 terms_not_accepted` (with the version to accept) until
    /// the user accepts it, in every route family; the routes a user must always reach stay open;
    /// an accepted user is judged from the gateway's memory, without a call to Accounts.
    @Suite(.serialized) struct TermsGateTests {
        /// A newly published version reaches the gateway by its event, at worst by the legal
        /// copy's revalidation (`GATEWAY_LEGAL_REFRESH`, 5 s) plus one call (3 s in the harness).
        static let publicationBound: Duration = .seconds(5 + 3)

        static func publish(_ harness: GatewayHarness, _ version: String, material: Bool) async throws {
            _ = try await harness.legalClient.call(
                LegalPublish.self,
                .init(
                    type: .termsOfService, version: version, content: "# Terms and Conditions\n\n## 1. Version \(version)\n\nText.\n",
                    material: material),
                principal: .operator("tests"), timeout: .seconds(10))
        }

        /// The value of one `gateway_terms_checks_total` series in `/metrics` (0 when absent).
        static func checks(_ harness: GatewayHarness, source: String) async throws -> Int {
            let text = try await harness.http.get("/metrics").text
            let prefix = "gateway_terms_checks_total{source=\"\(source)\"} "
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return 0 }
            return Int(Double(line.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces)) ?? -1)
        }

        /// Asserts the native refusal: 403, the stable code, the version in the body and header.
        static func expectRefused(_ reply: HTTPReply, version: String, _ what: String) {
            #expect(reply.status == 403, "\(what): \(reply.status) \(reply.text)")
            #expect(reply.json["error"] as? String == "terms_not_accepted", "\(what): \(reply.text)")
            #expect(reply.json["currentVersion"] as? String == version, "\(what)")
            #expect((reply.json["details"] as? [String: Any])?["currentVersion"] as? String == version, "\(what)")
            #expect(reply.header("X-Compass-Terms-Version") == version, "\(what)")
        }

        @Test func protectedRoutesNeedTheTermsInEffectAndAnAcceptanceOpensThem() async throws {
            try await GatewayHarness.run { harness in
                let http = harness.http
                let user = try await harness.user()
                let id = try await harness.upload(GatewayHarness.randomBytes(1000), as: user)
                let rest = ["apikey": user.token, "Authorization": "Bearer " + user.token]
                let signedURL = try #require(try await http.get("/api/documents/\(id)", headers: user.auth).json["fileUrl"] as? String)
                // The Storage object path (`documents/<id>/<name>`) inside the signed file URL.
                let fileUrl = try #require(URL(string: signedURL)?.path.replacingOccurrences(of: "/storage/v1/object/sign/", with: ""))

                // Accepted at sign-up: open; after the first check, judged from memory.
                #expect(try await http.get("/api/documents", headers: user.auth).status == 200)
                let (memoryBefore, accountsBefore) = (
                    try await Self.checks(harness, source: "memory"), try await Self.checks(harness, source: "accounts")
                )
                for _ in 0..<20 { #expect(try await http.get("/api/documents/\(id)", headers: user.auth).status == 200) }
                let (memoryAfter, accountsAfter) = (
                    try await Self.checks(harness, source: "memory"), try await Self.checks(harness, source: "accounts")
                )
                #expect(
                    memoryAfter - memoryBefore == 20 && accountsAfter == accountsBefore,
                    "memory \(memoryBefore)→\(memoryAfter), accounts \(accountsBefore)→\(accountsAfter)")

                // An editorial version changes nothing.
                try await Self.publish(harness, "2026-02-01-editorial", material: false)
                try await Task.sleep(for: .milliseconds(500))
                #expect(try await http.get("/api/documents", headers: user.auth).status == 200)

                // A material version: refused until accepted, within the publication bound.
                try await Self.publish(harness, "2026-03-01", material: true)
                let (status, took) = try await harness.waitForStatus(403, of: "/api/documents", headers: user.auth, within: Self.publicationBound)
                #expect(status == 403)
                print("TERMS GATE a material version was enforced \(took) after legal.publish answered (bound \(Self.publicationBound))")
                Self.expectRefused(try await http.get("/api/documents", headers: user.auth), version: "2026-03-01", "list")
                Self.expectRefused(try await http.get("/api/documents/\(id)/content", headers: user.auth), version: "2026-03-01", "content")
                Self.expectRefused(
                    try await http.send("POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 60], headers: user.auth),
                    version: "2026-03-01", "share link")
                Self.expectRefused(
                    try await http.send("POST", "/api/uploads", headers: user.tus.merging(["Upload-Length": "10"]) { _, new in new }),
                    version: "2026-03-01", "tus creation")
                let postgrest = try await http.get("/rest/v1/documents?select=id", headers: rest)
                #expect(postgrest.status == 403 && postgrest.json["code"] as? String == "PGRST-terms_not_accepted", "\(postgrest.text)")
                #expect(postgrest.json["details"] as? String == "currentVersion=2026-03-01")
                let storage = try await http.get("/storage/v1/object/\(fileUrl)", headers: rest)
                #expect(storage.status == 403 && storage.json["error"] as? String == "terms_not_accepted", "\(storage.text)")

                // Open all along: the terms, the user's own account and consents, sign-out is
                // checked below; erasing one's own document too.
                #expect(try await http.get("/api/terms").json["version"] as? String == "2026-03-01")
                #expect(try await http.get("/legal/terms").status == 200)
                let me = try await http.get("/api/me", headers: user.auth)
                #expect(me.status == 200 && me.json["needsToAcceptTOS"] as? Bool == true)
                #expect(try await http.get("/api/me/consents", headers: user.auth).status == 200)
                #expect(try await http.get("/api/me/deletion/preview", headers: user.auth).status == 200)

                // Accepting another version is refused with a message naming the one in effect.
                let wrong = try await http.send(
                    "POST", "/api/me/consents/terms_of_service/accept", json: ["version": "2025-12-12"], headers: user.auth)
                #expect(wrong.status == 409 && (wrong.json["message"] as? String ?? "").contains("2026-03-01"), "\(wrong.text)")
                #expect(try await http.get("/api/documents", headers: user.auth).status == 403)

                // Accepting the version in effect opens the routes at once.
                let accepted = try await http.send(
                    "POST", "/api/me/consents/terms_of_service/accept", json: ["version": "2026-03-01"], headers: user.auth)
                #expect(accepted.status == 201, "\(accepted.text)")
                #expect(try await http.get("/api/documents", headers: user.auth).status == 200)
                #expect(try await http.get("/rest/v1/documents?select=id", headers: rest).status == 200)
                #expect(try await http.get("/storage/v1/object/\(fileUrl)", headers: rest).status == 200)
                #expect(try await http.send("DELETE", "/api/documents/\(id)", headers: user.auth).status == 204)
            }
        }

        /// Declining (here through PostgREST, as seed 001's Supabase client records it) signs the
        /// user out; signed in again, they are refused until they accept.
        @Test func aDeclineIsEnforcedAfterSigningInAgain() async throws {
            try await GatewayHarness.run { harness in
                let http = harness.http
                let appleId = "apple.decline." + UUID().uuidString
                let (userId, token, _) = try await harness.signedUpUser(appleId: appleId)
                let terms = try await harness.currentTerms()
                #expect(try await http.get("/api/documents", headers: HTTPClient.bearer(token)).status == 200)
                let declined = try await http.send(
                    "POST", "/rest/v1/legal_acceptances",
                    json: ["user_id": userId, "document_type": "terms_of_service", "version": terms, "action": "decline"],
                    headers: ["apikey": token, "Authorization": "Bearer " + token, "Prefer": "return=representation"])
                #expect(declined.status == 201 && declined.jsonArray.first?["action"] as? String == "decline", "\(declined.text)")
                #expect(try await http.get("/api/documents", headers: HTTPClient.bearer(token)).status == 401)

                let again = try await harness.signIn(appleId: appleId)
                let fresh = HTTPClient.bearer(again["sessionToken"] as? String ?? "")
                Self.expectRefused(try await http.get("/api/documents", headers: fresh), version: terms, "after a decline")
                #expect(try await http.get("/api/me", headers: fresh).status == 200)
                let accepted = try await http.send("POST", "/api/me/consents/terms_of_service/accept", json: ["version": terms], headers: fresh)
                #expect(accepted.status == 201)
                #expect(try await http.get("/api/documents", headers: fresh).status == 200)
                // Signing out stays open whatever the standing.
                #expect(try await http.send("POST", "/api/auth/sign-out", headers: fresh).status == 200)
            }
        }

        /// Seed 004's client hard-codes `tos_version` "2025-12-12". After newer terms are
        /// published, its sign-up still creates the account, records no acceptance of the old
        /// version, and answers `needsToAcceptTOS`; the app's terms screen then accepts the
        /// version `GET /api/terms` shows.
        @Test func seed004SignUpWithAStaleTermsVersion() async throws {
            try await GatewayHarness.run { harness in
                let http = harness.http
                try await Self.publish(harness, "2026-06-01", material: true)
                try await withTimeout(Self.publicationBound, "the gateway serving 2026-06-01") {
                    while try await http.get("/api/terms").json["version"] as? String != "2026-06-01" { try await Task.sleep(for: .milliseconds(50)) }
                }
                let appleId = "001122.stale." + UUID().uuidString
                let session = try await harness.signIn(appleId: appleId)
                let auth = HTTPClient.bearer(session["sessionToken"] as? String ?? "")
                let created = try await http.send(
                    "POST", "/api/users",
                    json: [
                        "apple_id": appleId, "email": "stale@example.com", "name": "Sam", "state": "AL", "eligibility_certified": true,
                        "tos_version": "2025-12-12",
                    ],
                    headers: auth)
                #expect(created.status == 200, "\(created.text)")
                let userId = try #require(created.json["id"] as? String)
                #expect(userId != "00000000-0000-0000-0000-000000000000")
                #expect(created.json["hasConfirmedEligibility"] as? Bool == true)
                #expect(created.json["hasAcceptedTOS"] as? Bool == false && created.json["needsToAcceptTOS"] as? Bool == true)
                #expect(created.json["needs_to_accept_tos"] as? Bool == true && created.json["tos_version"] is NSNull)
                // Nothing was recorded for the old version.
                let history = try await harness.auditClient.call(
                    AuditHistory.self, .init(userId: UUID(uuidString: userId)!), principal: .service("tests"))
                #expect(history.records.isEmpty)
                let row = try await harness.database.pool.withConnection { db in
                    try db.query(
                        "SELECT eligibility_confirmed_at IS NOT NULL, tos_accepted_at IS NOT NULL FROM accounts.users WHERE id = $1",
                        UUID(uuidString: userId)!)[0].decode(Bool.self, Bool.self)
                }
                #expect(row.0 && !row.1, "eligible, no acceptance recorded")
                Self.expectRefused(try await http.get("/api/documents", headers: auth), version: "2026-06-01", "before accepting")

                // The app's terms screen: the terms in effect, then accept-tos with that version.
                let terms = try await http.get("/api/terms")
                #expect(terms.json["version"] as? String == "2026-06-01")
                let old = try await http.send("PUT", "/api/users/\(userId)/accept-tos", json: ["tos_version": "2025-12-12"], headers: auth)
                #expect(old.status == 409 && (old.json["error"] as? String ?? "").contains("2026-06-01"), "\(old.text)")
                let accepted = try await http.send("PUT", "/api/users/\(userId)/accept-tos", json: ["tos_version": "2026-06-01"], headers: auth)
                #expect(accepted.status == 200 && accepted.json["hasAcceptedTOS"] as? Bool == true, "\(accepted.text)")
                #expect(try await http.get("/api/documents", headers: auth).status == 200)
                let after = try await harness.database.pool.withConnection { db in
                    try db.query("SELECT tos_version FROM accounts.users WHERE id = $1", UUID(uuidString: userId)!)[0].decode(String.self, column: 0)
                }
                #expect(after == "2026-06-01")
                // Signing in again (seed 004's getOrCreate without compliance fields) finds the
                // same account, now needing nothing.
                let existing = try await http.send("POST", "/api/users", json: ["apple_id": appleId], headers: auth)
                #expect(existing.json["id"] as? String == userId && existing.json["needsToAcceptTOS"] as? Bool == false)
            }
        }
    }
}
