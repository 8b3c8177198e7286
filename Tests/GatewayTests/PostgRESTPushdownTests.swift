import Contracts
import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension GatewayIntegration {
    /// `/rest/v1` reads done in the owning service's SQL, through the real gateway and services:
    /// filters, typed order, counts, `Range`, errors, and `legal_acceptances` read and insert.
    @Suite(.serialized) struct PostgRESTPushdownTests {
        static let types = ["transcript", "resume", "highlight_video", "stats_sheet"]

        static func encoded(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
        }

        @Test func documentsFilterOrderCountAndRangeOverSixtyRows() async throws {
            try await GatewayHarness.run { harness in
                let user = try await harness.user()
                let http = harness.http
                // 60 documents; sizes a permutation crossing digit counts, so text order would differ.
                var ids: [String] = []
                var sizes: [String: Int] = [:]
                for index in 0..<60 {
                    let size = 10 + ((index * 37) % 60) * 20
                    let id = try await harness.upload(
                        Data(repeating: UInt8(index), count: size), as: user, type: Self.types[index % 4], fileName: "n\(index).bin")
                    ids.append(id)
                    sizes[id] = size
                }
                let keys = ["apikey": user.token, "Authorization": "Bearer " + user.token]
                let counted = keys.merging(["Prefer": "count=exact"]) { _, new in new }

                // Number order, a page, the exact count: 206 and Content-Range first-last/total.
                let bySize = try await http.get("/rest/v1/documents?select=id,file_size&order=file_size.desc&limit=10", headers: counted)
                #expect(bySize.status == 206 && bySize.header("Content-Range") == "0-9/60", "\(bySize.status) \(bySize.headers)")
                #expect(bySize.jsonArray.map { $0["file_size"] as? Int } == sizes.values.sorted(by: >).prefix(10).map { Optional($0) })
                #expect(Set(bySize.jsonArray[0].keys) == ["id", "file_size"])
                // Time order, ascending: the upload order.
                let byTime = try await http.get("/rest/v1/documents?select=id,created_at&order=created_at.asc", headers: counted)
                #expect(byTime.status == 200 && byTime.header("Content-Range") == "0-59/60")
                #expect(byTime.jsonArray.compactMap { $0["id"] as? String } == ids)
                // The Range header, and offset/limit: the same windows.
                let ranged = try await http.get(
                    "/rest/v1/documents?select=id&order=created_at",
                    headers: counted.merging(["Range": "0-24", "Range-Unit": "items"]) { _, new in new })
                #expect(ranged.status == 206 && ranged.header("Content-Range") == "0-24/60" && ranged.jsonArray.count == 25)
                let last = try await http.get("/rest/v1/documents?select=id&order=created_at&offset=50&limit=25", headers: counted)
                #expect(last.status == 206 && last.header("Content-Range") == "50-59/60")
                #expect(last.jsonArray.compactMap { $0["id"] as? String } == Array(ids.suffix(10)))
                // HEAD (supabase-js `head: true`): the same headers, no body.
                let head = try await http.send("HEAD", "/rest/v1/documents?select=id&type=eq.resume", headers: counted)
                #expect(head.status == 200 && head.header("Content-Range") == "0-14/15" && head.body.isEmpty, "\(head.status) \(head.headers)")
                // Without count=exact the total is *; limit=1 gives one row.
                let one = try await http.get("/rest/v1/documents?select=id&order=file_size.asc&limit=1", headers: keys)
                #expect(one.status == 200 && one.header("Content-Range") == "0-0/*" && one.jsonArray.count == 1)
                #expect(one.jsonArray.first?["id"] as? String == sizes.min { $0.value < $1.value }?.key)
                // Times compare as times.
                let since = try #require(byTime.jsonArray[30]["created_at"] as? String)
                let recent = try await http.get("/rest/v1/documents?select=id&created_at=gte.\(Self.encoded(since))", headers: counted)
                #expect(
                    recent.status == 200 && recent.header("Content-Range") == "0-29/30"
                        && Set(recent.jsonArray.compactMap { $0["id"] as? String }) == Set(ids.suffix(30)), "\(since) \(recent.headers)")
                // in.(), or=(…) with a nested and(…), not., like.
                let typed = try await http.get("/rest/v1/documents?select=type&type=in.(resume,stats_sheet)", headers: counted)
                #expect(
                    typed.header("Content-Range") == "0-29/30"
                        && typed.jsonArray.allSatisfy { ["resume", "stats_sheet"].contains($0["type"] as? String ?? "") })
                let either = try await http.get(
                    "/rest/v1/documents?select=id&or=(type.eq.resume,and(type.eq.transcript,file_size.lt.400))", headers: keys)
                let expected = ids.enumerated().filter { $0.offset % 4 == 1 || ($0.offset % 4 == 0 && sizes[$0.element]! < 400) }.map(\.element)
                #expect(Set(either.jsonArray.compactMap { $0["id"] as? String }) == Set(expected))
                let notVideo = try await http.get("/rest/v1/documents?select=id&type=not.eq.highlight_video&limit=0", headers: counted)
                #expect(notVideo.header("Content-Range") == "*/45" && notVideo.jsonArray.isEmpty)
                // Names start with "n", which no hex id segment of `documents/<id>/<name>` can
                // (names starting with "f" matched a random id beginning "f1" now and then).
                let named = try await http.get("/rest/v1/documents?select=id&file_url=like.*%2Fn1*.bin", headers: counted)
                #expect(named.header("Content-Range") == "0-10/11", "\(named.headers)")  // n1, n10…n19

                // Hostile values are values: no rows, nothing changed.
                for hostile in ["'; DROP TABLE documents.documents; --", "x' OR '1'='1", "\") OR TRUE --"] {
                    let reply = try await http.get("/rest/v1/documents?select=id&title=eq.\(Self.encoded(hostile))", headers: counted)
                    #expect(reply.status == 200 && reply.jsonArray.isEmpty && reply.header("Content-Range") == "*/0")
                }
                #expect(try await http.get("/rest/v1/documents?select=id&limit=0", headers: counted).header("Content-Range") == "*/60")

                // Errors in PostgREST's shape.
                for (query, status, code) in [
                    ("title=fts.word", 400, "PGRST100"), ("or=(title.eq.a", 400, "PGRST100"), ("file_size=gt.big", 400, "22P02"),
                    ("created_at=lt.yesterday", 400, "22P02"), ("secret=eq.1", 400, "42703"), ("order=secret", 400, "42703"),
                    ("id=like.a*", 404, "42883"), ("select=id,owner(name)", 400, "PGRST100"),
                ] {
                    let reply = try await http.get("/rest/v1/documents?\(query)", headers: keys)
                    #expect(reply.status == status && reply.json["code"] as? String == code, "\(query): \(reply.status) \(reply.text)")
                    #expect(Set(reply.json.keys) == ["code", "details", "hint", "message"], "\(query)")
                }
                let past = try await http.get("/rest/v1/documents?offset=61", headers: counted)
                #expect(past.status == 416 && past.json["code"] as? String == "PGRST103", "\(past.status) \(past.text)")
                // The anon key sees no rows, counted as none.
                let anon = try await PostgRESTTests.anonKey()
                let anonymous = try await http.get(
                    "/rest/v1/documents?select=id", headers: ["apikey": anon, "Authorization": "Bearer " + anon, "Prefer": "count=exact"])
                #expect(anonymous.status == 200 && anonymous.jsonArray.isEmpty && anonymous.header("Content-Range") == "*/0")
            }
        }

        @Test func legalAcceptancesReadOwnRowsAndInsertThroughAccountsOnce() async throws {
            let anon = try await PostgRESTTests.anonKey()
            try await GatewayHarness.run { harness in
                let http = harness.http
                let user = try await harness.signedUpUser()
                let other = try await harness.signedUpUser()
                let userID = try #require(UUID(uuidString: user.id))
                let keys = PostgRESTTests.keys(anon, bearer: user.token).merging(["Prefer": "count=exact"]) { _, new in new }
                let terms = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
                let privacy = try await harness.legalClient.call(LegalCurrent.self, .init(type: .privacyPolicy)).summary.version

                // Own rows only: sign-up recorded the terms acceptance.
                let before = try await http.get("/rest/v1/legal_acceptances?select=*&order=accepted_at.desc", headers: keys)
                #expect(before.status == 200, "\(before.text)")
                let initial = before.jsonArray.count
                #expect(initial >= 1 && before.jsonArray.allSatisfy { $0["user_id"] as? String == user.id })
                #expect(before.header("Content-Range") == "0-\(initial - 1)/\(initial)")
                let theirs = try await http.get("/rest/v1/legal_acceptances?user_id=eq.\(other.id)", headers: keys)
                #expect(theirs.status == 200 && theirs.jsonArray.isEmpty && theirs.header("Content-Range") == "*/0")

                // A terms accept goes through Accounts: the user's stored acceptance moves.
                let stored = try await harness.accountsClient.call(AccountsGet.self, .init(userId: userID), principal: .service("tests"))
                let row: [String: Any] = ["user_id": user.id, "document_type": "terms_of_service", "version": terms]
                let natural = keys.merging(["Prefer": "return=representation,resolution=ignore-duplicates"]) { _, new in new }
                let first = try await http.send("POST", "/rest/v1/legal_acceptances", json: [row], headers: natural)
                #expect(first.status == 201 && first.jsonArray.first?["action"] as? String == "accept", "\(first.status) \(first.text)")
                let after = try await harness.accountsClient.call(AccountsGet.self, .init(userId: userID), principal: .service("tests"))
                #expect(after.tosVersion == terms && (after.tosAcceptedAt ?? .distantPast) > (stored.tosAcceptedAt ?? .distantPast))
                // Retried (the reply was lost): it lands once, and answers with the same row.
                let retry = try await http.send("POST", "/rest/v1/legal_acceptances", json: [row], headers: natural)
                #expect(retry.status == 201 && retry.jsonArray.first?["id"] as? String == first.jsonArray.first?["id"] as? String)
                let retried = try await harness.accountsClient.call(AccountsGet.self, .init(userId: userID), principal: .service("tests"))
                #expect(retried.tosAcceptedAt == after.tosAcceptedAt)

                // A privacy acknowledgment with an Idempotency-Key, sent twice: one record.
                let keyed = keys.merging(["Idempotency-Key": UUID().uuidString]) { _, new in new }
                let acknowledgment: [String: Any] = ["user_id": user.id, "document_type": "privacy_policy", "version": privacy]
                for _ in 0..<2 {
                    #expect(try await http.send("POST", "/rest/v1/legal_acceptances", json: acknowledgment, headers: keyed).status == 201)
                }
                let now = try await http.get("/rest/v1/legal_acceptances?select=document_type,action&order=accepted_at.asc", headers: keys)
                #expect(now.jsonArray.count == initial + 2, "\(now.text)")
                let privacyRows = try await http.get(
                    "/rest/v1/legal_acceptances?document_type=eq.privacy_policy&action=in.(acknowledge,accept)", headers: keys)
                #expect(privacyRows.header("Content-Range") == "0-0/1")
                let termsOnly = try await http.get(
                    "/rest/v1/legal_acceptances?or=(document_type.eq.terms_of_service,version.eq.none)&limit=1", headers: keys)
                #expect(termsOnly.status == 206 && termsOnly.header("Content-Range") == "0-0/\(initial + 1)")
                // Bad input: PostgREST's codes; merge-duplicates is not an upsert of a record.
                #expect(try await http.get("/rest/v1/legal_acceptances?action=eq.approve", headers: keys).json["code"] as? String == "22P02")
                #expect(try await http.get("/rest/v1/legal_acceptances?accepted_at=gt.soon", headers: keys).json["code"] as? String == "22P02")
                let merge = try await http.send(
                    "POST", "/rest/v1/legal_acceptances", json: [row],
                    headers: keys.merging(["Prefer": "resolution=merge-duplicates"]) { _, new in new })
                #expect(merge.status == 400 && merge.json["code"] as? String == "PGRST100")
                // The other user still has only their own sign-up record; the anon key reads none.
                let theirOwn = try await http.get("/rest/v1/legal_acceptances", headers: PostgRESTTests.keys(anon, bearer: other.token))
                #expect(theirOwn.jsonArray.allSatisfy { $0["user_id"] as? String == other.id } && theirOwn.jsonArray.count == initial)
                let anonymous = try await http.get("/rest/v1/legal_acceptances", headers: PostgRESTTests.keys(anon))
                #expect(anonymous.status == 200 && anonymous.jsonArray.isEmpty)
            }
        }
    }
}
