import Contracts
import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension GatewayIntegration {
    /// The Supabase-compatible subset under `/rest/v1`, through the real gateway.
    @Suite(.serialized) struct PostgRESTTests {
        /// The anon key as an operator gets it: `Gateway --print-anon-key`.
        static func anonKey(secret: String = GatewayHarness.jwtSecret) async throws -> String {
            let process = Process()
            process.executableURL = PeerProcess.productsDirectory.appendingPathComponent("Gateway")
            process.arguments = ["--print-anon-key"]
            process.environment = ["GATEWAY_JWT_SECRET": secret]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let printed = pipe.fileHandleForReading.readDataToEndOfFile()
            await process.exited()
            return String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        static func keys(_ key: String, bearer: String? = nil) -> [String: String] {
            ["apikey": key, "Authorization": "Bearer " + (bearer ?? key)]
        }

        @Test func legalDocumentsReadsAsSupabaseDoes() async throws {
            let anon = try await Self.anonKey()
            #expect(anon.split(separator: ".").count == 3)
            // The variable as an env file may carry it, with a trailing space: the printed key is
            // signed with the secret the gateway holds (trimmed), as the settings read it.
            let padded = try await Self.anonKey(secret: GatewayHarness.jwtSecret + " ")
            #expect(try await Self.anonKey(secret: "too-short-secret") == "")
            try await GatewayHarness.run { harness in
                let fromPadded = try await harness.http.get("/rest/v1/legal_documents?select=version", headers: Self.keys(padded))
                #expect(fromPadded.status == 200, "\(fromPadded.status) \(fromPadded.text.prefix(200))")
                let keys = Self.keys(anon)
                let single = keys.merging(["Accept": "application/vnd.pgrst.object+json"]) { a, _ in a }
                // Seed 000 / 001: select three columns of one type, .single().
                for type in ["privacy_policy", "terms_of_service"] {
                    let reply = try await harness.http.get(
                        "/rest/v1/legal_documents?select=content,last_updated,version&type=eq.\(type)", headers: single)
                    #expect(reply.status == 200)
                    #expect(Set(reply.json.keys) == ["content", "last_updated", "version"])
                    #expect((reply.json["content"] as? String)?.hasPrefix("# ") == true)
                    #expect((reply.json["last_updated"] as? String)?.hasSuffix("Z") == true)
                }
                // Without .single(): an array; select=* gives every column.
                let all = try await harness.http.get("/rest/v1/legal_documents?select=*&order=type.desc", headers: keys)
                #expect(all.jsonArray.count == 2 && all.jsonArray.first?["type"] as? String == "terms_of_service")
                #expect(all.jsonArray.first?["content_sha256"] is String)
                let limited = try await harness.http.get("/rest/v1/legal_documents?select=type&limit=1", headers: keys)
                #expect(limited.jsonArray.count == 1)
                // .single() with 0 or 2 rows: PostgREST's 406 PGRST116.
                let two = try await harness.http.get("/rest/v1/legal_documents?select=version", headers: single)
                #expect(
                    two.status == 406 && two.json["code"] as? String == "PGRST116" && two.json["details"] as? String == "The result contains 2 rows")
                let none = try await harness.http.get(
                    "/rest/v1/legal_documents?select=version&type=eq.terms_of_service&version=eq.none", headers: single)
                #expect(none.status == 406 && none.json["details"] as? String == "The result contains 0 rows")
                // `type` is an enum, as in PostgreSQL: another value is 22P02, not an empty answer.
                let cookie = try await harness.http.get("/rest/v1/legal_documents?select=version&type=eq.cookie_policy", headers: keys)
                #expect(cookie.status == 400 && cookie.json["code"] as? String == "22P02", "\(cookie.text)")
                // Unsupported input: PostgREST's 400s, never a 500.
                for query in ["type=cs.{a}", "type=fts.terms", "select=content(*)", "limit=-1", "order=type.sideways", "type=eq(any).x"] {
                    let reply = try await harness.http.get("/rest/v1/legal_documents?\(query)", headers: keys)
                    #expect(reply.status == 400 && reply.json["code"] as? String == "PGRST100", "\(query): \(reply.status) \(reply.text)")
                    #expect(reply.json.keys.contains("hint") && reply.json.keys.contains("details"))
                }
                let column = try await harness.http.get("/rest/v1/legal_documents?select=secret", headers: keys)
                #expect(column.status == 400 && column.json["code"] as? String == "42703")
                let table = try await harness.http.get("/rest/v1/users?select=*", headers: keys)
                #expect(table.status == 404 && table.json["code"] as? String == "PGRST205")
                // Keys: none, or a forged one, is 401.
                let missing = try await harness.http.get("/rest/v1/legal_documents")
                #expect(missing.status == 401 && missing.json["message"] as? String == "No API key found in request")
                let forged = String(anon.dropLast(4)) + "AAAA"
                #expect(try await harness.http.get("/rest/v1/legal_documents", headers: Self.keys(forged)).status == 401)
            }
        }

        /// `legal_documents` answers filters, order, `Range` and `Prefer: count=exact` as the
        /// other tables do (supabase-js's `select('version', {count: 'exact'})` gets a number).
        @Test func legalDocumentsFilterOrderPageAndCountLikeTheOtherTables() async throws {
            let anon = try await Self.anonKey()
            try await GatewayHarness.run { harness in
                let keys = Self.keys(anon)
                let counted = keys.merging(["Prefer": "count=exact"]) { a, _ in a }
                func types(_ query: String) async throws -> [String] {
                    let reply = try await harness.http.get("/rest/v1/legal_documents?select=type&\(query)", headers: keys)
                    #expect(reply.status == 200, "\(query): \(reply.status) \(reply.text)")
                    return reply.jsonArray.compactMap { $0["type"] as? String }
                }
                #expect(try await types("type=neq.privacy_policy") == ["terms_of_service"])
                #expect(try await types("type=not.eq.privacy_policy") == ["terms_of_service"])
                #expect(try await types("type=like.*terms*") == ["terms_of_service"])
                #expect(try await types("type=ilike.PRIVACY*") == ["privacy_policy"])
                #expect(try await types("or=(type.eq.privacy_policy,version.eq.none)") == ["privacy_policy"])
                #expect(try await types("type=in.(terms_of_service,privacy_policy)&order=type.desc") == ["terms_of_service", "privacy_policy"])
                #expect(
                    try await types("last_updated=gt.2000-01-01&requires_reacceptance=not.is.null&order=type") == [
                        "privacy_policy", "terms_of_service",
                    ])
                #expect(try await types("last_updated=lt.2000-01-01T00:00:00%2B01:00").isEmpty)

                // Counted: every row, and Content-Range says so; a Range or a limit that leaves
                // rows out is a 206; an offset past the total a 416.
                let all = try await harness.http.get("/rest/v1/legal_documents?select=version", headers: counted)
                #expect(all.status == 200 && all.jsonArray.count == 2 && all.header("Content-Range") == "0-1/2")
                // HEAD (supabase-js `{count: 'exact', head: true}`): the same headers, no body.
                let head = try await harness.http.send("HEAD", "/rest/v1/legal_documents?select=version", headers: counted)
                #expect(head.status == 200 && head.header("Content-Range") == "0-1/2" && head.body.isEmpty, "\(head.status)")
                let uncounted = try await harness.http.get("/rest/v1/legal_documents?select=version", headers: keys)
                #expect(uncounted.status == 200 && uncounted.header("Content-Range") == "0-1/*")
                let first = try await harness.http.get(
                    "/rest/v1/legal_documents?select=type&order=type",
                    headers: counted.merging(["Range": "0-0", "Range-Unit": "items"]) { a, _ in a })
                #expect(first.status == 206 && first.header("Content-Range") == "0-0/2")
                #expect(first.jsonArray.map { $0["type"] as? String } == ["privacy_policy"])
                let second = try await harness.http.get(
                    "/rest/v1/legal_documents?select=type&order=type", headers: keys.merging(["Range": "1-"]) { a, _ in a })
                #expect(second.status == 200 && second.header("Content-Range") == "1-1/*")
                #expect(second.jsonArray.map { $0["type"] as? String } == ["terms_of_service"])
                let paged = try await harness.http.get("/rest/v1/legal_documents?select=type&order=type&limit=1&offset=1", headers: counted)
                #expect(paged.status == 206 && paged.header("Content-Range") == "1-1/2" && paged.jsonArray.count == 1)
                let filtered = try await harness.http.get("/rest/v1/legal_documents?select=type&type=eq.terms_of_service", headers: counted)
                #expect(filtered.status == 200 && filtered.header("Content-Range") == "0-0/1")
                let past = try await harness.http.get("/rest/v1/legal_documents?select=type&offset=5", headers: counted)
                #expect(past.status == 416 && past.json["code"] as? String == "PGRST103", "\(past.status) \(past.text)")
                let single = try await harness.http.get(
                    "/rest/v1/legal_documents?select=version&type=eq.privacy_policy",
                    headers: counted.merging(["Accept": "application/vnd.pgrst.object+json"]) { a, _ in a })
                #expect(single.status == 200 && single.json["version"] is String && single.header("Content-Range") == "0-0/1")
                let column = try await harness.http.get("/rest/v1/legal_documents?select=type&content_sha256=gt.0&order=secret", headers: keys)
                #expect(column.status == 400 && column.json["code"] as? String == "42703")
            }
        }

        @Test func acceptancesBecomeTheCallersAuditRecords() async throws {
            let anon = try await Self.anonKey()
            try await GatewayHarness.run { harness in
                let user = try await harness.signedUpUser()
                let other = try await harness.signedUpUser()
                let privacy = try await harness.legalClient.call(LegalCurrent.self, .init(type: .privacyPolicy)).summary.version
                let row: [String: Any] = [
                    "user_id": user.id, "document_type": "privacy_policy", "version": privacy,
                    "accepted_at": "2020-01-01T00:00:00Z", "ip_address": "10.9.9.9",
                ]
                // The anon key cannot write.
                let anonymous = try await harness.http.send("POST", "/rest/v1/legal_acceptances", json: [row], headers: Self.keys(anon))
                #expect(anonymous.status == 401 && anonymous.json["code"] as? String == "42501")
                // The user's session: 201; with return=representation, the stored row.
                let keys = Self.keys(anon, bearer: user.token)
                let minimal = try await harness.http.send("POST", "/rest/v1/legal_acceptances", json: [row], headers: keys)
                #expect(minimal.status == 201 && minimal.body.isEmpty)
                let represented = try await harness.http.send(
                    "POST", "/rest/v1/legal_acceptances", json: row, headers: keys.merging(["Prefer": "return=representation"]) { a, _ in a })
                #expect(represented.status == 201 && represented.jsonArray.first?["action"] as? String == "acknowledge")
                // Another user's id: refused like a row-level-security violation, nothing recorded.
                var theirs = row
                theirs["user_id"] = other.id
                let refused = try await harness.http.send("POST", "/rest/v1/legal_acceptances", json: [theirs], headers: keys)
                #expect(refused.status == 403 && refused.json["code"] as? String == "42501")
                let bad = try await harness.http.send("POST", "/rest/v1/legal_acceptances", json: ["user_id": user.id], headers: keys)
                #expect(bad.status == 400 && bad.json["code"] as? String == "PGRST102")
                let unknownVersion = try await harness.http.send(
                    "POST", "/rest/v1/legal_acceptances", json: ["user_id": user.id, "document_type": "privacy_policy", "version": "0.0.0"],
                    headers: keys)
                #expect(unknownVersion.status == 400 && unknownVersion.json["message"] is String)
                // Audit holds the user's two records, with the gateway's view of time and address.
                let userID = try #require(UUID(uuidString: user.id))
                let history = try await harness.auditClient.call(
                    AuditHistory.self, .init(userId: userID, documentType: .privacyPolicy), principal: .service("tests"))
                #expect(history.records.count == 2)
                #expect(
                    history.records.allSatisfy { $0.clientIP == "127.0.0.1" && $0.receipt.recordedAt > Date(timeIntervalSince1970: 1_700_000_000) })
                let otherID = try #require(UUID(uuidString: other.id))
                #expect(
                    try await harness.auditClient.call(
                        AuditHistory.self, .init(userId: otherID, documentType: .privacyPolicy), principal: .service("tests")
                    ).records.isEmpty)
            }
        }
    }
}
