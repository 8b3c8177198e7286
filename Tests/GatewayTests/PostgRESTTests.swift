import Contracts
import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension GatewayIntegration {
    /// The Supabase-compatible subset under `/rest/v1`, through the real gateway.
    @Suite(.serialized) struct PostgRESTTests {
        /// The anon key as an operator gets it: `Gateway --print-anon-key`.
        static func anonKey() throws -> String {
            let process = Process()
            process.executableURL = PeerProcess.productsDirectory.appendingPathComponent("Gateway")
            process.arguments = ["--print-anon-key"]
            process.environment = ["GATEWAY_JWT_SECRET": GatewayHarness.jwtSecret]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            process.waitUntilExit()
            return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        static func keys(_ key: String, bearer: String? = nil) -> [String: String] {
            ["apikey": key, "Authorization": "Bearer " + (bearer ?? key)]
        }

        @Test func legalDocumentsReadsAsSupabaseDoes() async throws {
            let anon = try Self.anonKey()
            #expect(anon.split(separator: ".").count == 3)
            try await GatewayHarness.run { harness in
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
                let none = try await harness.http.get("/rest/v1/legal_documents?select=version&type=eq.cookie_policy", headers: single)
                #expect(none.status == 406 && none.json["details"] as? String == "The result contains 0 rows")
                // Unsupported input: PostgREST's 400s, never a 500.
                for query in [
                    "type=neq.terms_of_service", "type=like.*terms*", "or=(type.eq.a,type.eq.b)", "select=content(*)", "limit=-1",
                    "order=type.sideways",
                ] {
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

        @Test func acceptancesBecomeTheCallersAuditRecords() async throws {
            let anon = try Self.anonKey()
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
