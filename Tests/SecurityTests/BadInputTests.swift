import Foundation
import GatewayTestSupport
import Postgres
import TestSupport
import Testing

extension SecurityTests {
    /// Hostile HTTP input: oversized bodies, headers and URLs, invalid UTF-8, SQL-looking text.
    /// Each is refused with a clear status (or stored verbatim) and changes nothing else.
    @Suite(.serialized) struct BadInputTests {
        /// Rows in the tables a request could write to.
        static func tableCounts(_ harness: GatewayHarness) async throws -> [String: Int] {
            // Audit chains an acknowledged act after the reply (the sign-up's, here) and may lag by
            // as long as the cluster's oldest writing transaction lasts: count once it has caught up,
            // so a record chained late is not taken for one a refused request wrote.
            try await harness.waitForChained()
            var counts: [String: Int] = [:]
            for table in ["documents.documents", "documents.share_links", "audit.records", "accounts.users", "accounts.deletion_requests"] {
                counts[table] = try await harness.database.pool.withConnection { db in
                    // The table names are the fixed list above, not input.
                    try db.query("SELECT count(*)::bigint FROM \(table)")[0].decode(Int.self, column: 0)
                }
            }
            return counts
        }

        @Test func oversizedBodiesAre413AndStoreNothing() async throws {
            try await GatewayHarness.run { harness in
                let user = try await harness.user()
                let http = harness.http
                let terms = try await harness.currentTerms()
                let id = try await harness.upload(Data("x".utf8), as: user)
                let fileUrl = GatewayHarness.storedFileUrl(
                    try #require(try await http.get("/api/documents/\(id)", headers: user.auth).json["fileUrl"] as? String))
                let before = try await Self.tableCounts(harness)
                let big = String(repeating: "x", count: 100 * 1024)
                let rest = user.auth.merging(["apikey": user.token]) { a, _ in a }
                let requests: [(String, String, [String: Any], [String: String])] = [
                    ("POST", "/api/documents", ["type": "resume", "title": big, "fileName": "a.bin", "length": 1], user.auth),
                    ("POST", "/api/me/consents/terms_of_service/accept", ["version": terms, "padding": big], user.auth),
                    ("POST", "/api/me/eligibility", ["state": big, "eligibilityCertified": true], user.auth),
                    ("PUT", "/api/users/\(user.id)/accept-tos", ["tos_version": big], user.auth),
                    ("POST", "/api/users", ["apple_id": big], user.auth),
                    ("POST", "/rest/v1/legal_acceptances", ["user_id": user.id, "document_type": "privacy_policy", "version": big], rest),
                    ("POST", "/api/documents/\(id)/share-links", ["expiresInSeconds": 60, "padding": big], user.auth),
                    ("POST", "/storage/v1/object/sign/\(fileUrl)", ["expiresIn": 60, "padding": big], user.auth),
                    ("POST", "/api/auth/apple", ["identityToken": big], [:]),
                    ("POST", "/api/auth/refresh", ["refreshToken": big], [:]),
                    ("POST", "/api/receipts/verify", ["receipt": big], [:]),
                    ("POST", "/api/apple/notifications", ["payload": big], [:]),
                ]
                for (method, path, json, headers) in requests {
                    let reply = try await http.send(method, path, json: json, headers: headers)
                    #expect(reply.status == 413, "\(method) \(path) with a 100 KiB body answered \(reply.status) \(reply.text.prefix(200))")
                }
                // Chunked, without Content-Length: the limit holds while the body is read.
                let chunkedJSON =
                    Data("{\"type\":\"resume\",\"fileName\":\"a.bin\",\"length\":1,\"title\":\"".utf8) + Data(repeating: 0x61, count: 1 << 20)
                    + Data("\"}".utf8)
                var chunked: [Int] = []
                for (method, path) in [
                    ("POST", "/api/documents"), ("PUT", "/api/users/\(user.id)/accept-tos"), ("POST", "/api/me/consents/terms_of_service/accept"),
                ] {
                    let status = try await CurlProbe.status(
                        http.base + path, method: method, headers: ["Authorization": "Bearer " + user.token, "Content-Type": "application/json"],
                        chunkedBody: chunkedJSON)
                    chunked.append(status)
                }
                // The limit is met while the body streams in: answered 413 before it is all read.
                #expect(chunked == [413, 413, 413], "chunked 1 MiB bodies answered \(chunked)")
                // tus: a declared length above Tus-Max-Size, and a PATCH past the declared length.
                let huge = try await http.send(
                    "POST", "/api/uploads",
                    headers: user.tus.merging([
                        "Upload-Length": String(5 << 30), "Upload-Metadata": GatewayHarness.metadata(["type": "resume", "filename": "a.bin"]),
                    ]) { a, _ in a })
                #expect(huge.status == 413, "tus creation of 5 GiB answered \(huge.status)")
                let small = try await harness.tusCreate(user, length: 10)
                let overflow = try await harness.tusPatch(user, small, offset: 0, Data(repeating: 1, count: 11))
                // Refused from its Content-Length before a byte is stored: invalid_argument.
                #expect(overflow.status == 400, "a PATCH past Upload-Length answered \(overflow.status)")
                let offset = try await http.send("HEAD", small, headers: user.tus).header("Upload-Offset")
                #expect(offset == "0", "the overflowing PATCH left offset \(offset ?? "nil")")
                var after = try await Self.tableCounts(harness)
                after["documents.documents"]! -= 1  // the 10-byte upload created above
                #expect(after == before, "an oversized request stored something: \(before) → \(after)")
                print(
                    "SECURITY oversized bodies: \(requests.count) JSON routes × 100 KiB → 413; 3 chunked 1 MiB bodies (no Content-Length) → \(chunked); tus 5 GiB creation → \(huge.status); PATCH past the length → \(overflow.status), offset \(offset ?? "?"); rows unchanged in \(before.count) tables"
                )
            }
        }

        @Test func oversizedHeadersAndURLsAreRefusedAndTheGatewayKeepsServing() async throws {
            try await GatewayHarness.run { harness in
                let base = harness.http.base
                var results: [String: Int] = [:]
                for kilobytes in [8, 64, 128] {
                    results["header \(kilobytes) KiB"] = try await CurlProbe.status(
                        base + "/api/terms", headers: ["X-Padding": String(repeating: "h", count: kilobytes * 1024 - 64)])
                }
                results["100 headers of 1 KiB"] = try await CurlProbe.status(
                    base + "/api/terms",
                    headers: Dictionary(uniqueKeysWithValues: (0..<100).map { ("X-H\($0)", String(repeating: "h", count: 1000)) }))
                for kilobytes in [16, 100] {
                    results["URL \(kilobytes) KiB"] = try await CurlProbe.status(
                        base + "/api/documents/" + String(repeating: "a", count: kilobytes * 1024))
                    results["query \(kilobytes) KiB"] = try await CurlProbe.status(
                        base + "/api/terms?q=" + String(repeating: "a", count: kilobytes * 1024))
                }
                // Above the HTTP parser's limit (80 KiB of request head): refused with 400 by
                // the parser, an answer and not a closed connection. Below it: served by the
                // route (the document route asks who is calling first).
                #expect(
                    results == [
                        "header 8 KiB": 200, "header 64 KiB": 200, "header 128 KiB": 400, "100 headers of 1 KiB": 400,
                        "URL 16 KiB": 401, "URL 100 KiB": 400, "query 16 KiB": 200, "query 100 KiB": 400,
                    ], "\(results.sorted { $0.key < $1.key })")
                // Still serving, on new connections.
                #expect(try await harness.http.get("/api/terms").status == 200)
                #expect(try await CurlProbe.status(base + "/healthz") == 200)
                print(
                    "SECURITY oversized headers/URLs: \(results.sorted { $0.key < $1.key }.map { "\($0.key) → \($0.value)" }.joined(separator: ", ")) (0 = connection closed without a response); gateway served /api/terms and /healthz afterwards"
                )
            }
        }

        @Test func invalidUTF8IsRefusedWith400AndStoresNothing() async throws {
            try await GatewayHarness.run { harness in
                let user = try await harness.user()
                let http = harness.http
                let terms = try await harness.currentTerms()
                _ = try await harness.upload(Data("x".utf8), as: user)
                let before = try await Self.tableCounts(harness)
                let invalid: [(String, [UInt8])] = [
                    ("lone continuation byte", [0x80]), ("overlong slash", [0xC0, 0xAF]), ("surrogate half", [0xED, 0xA0, 0x80]),
                    ("FF FE", [0xFF, 0xFE]), ("truncated sequence", [0xE2, 0x82]),
                ]
                func body(_ prefix: String, _ bytes: [UInt8], _ suffix: String) -> Data { Data(prefix.utf8) + Data(bytes) + Data(suffix.utf8) }
                var answers: [Int: Int] = [:]
                let rest = user.auth.merging(["apikey": user.token, "Content-Type": "application/json"]) { a, _ in a }
                let json = user.auth.merging(["Content-Type": "application/json"]) { a, _ in a }
                for (name, bytes) in invalid {
                    let requests: [(String, String, Data, [String: String])] = [
                        (
                            "POST", "/api/documents", body("{\"type\":\"resume\",\"title\":\"a", bytes, "b\",\"fileName\":\"a.bin\",\"length\":1}"),
                            json
                        ),
                        (
                            "POST", "/api/documents",
                            body("{\"type\":\"resume\",\"title\":\"t\",\"description\":\"", bytes, "\",\"fileName\":\"a.bin\",\"length\":1}"), json
                        ),
                        ("PUT", "/api/users/\(user.id)/accept-tos", body("{\"tos_version\":\"", bytes, "\"}"), json),
                        ("POST", "/api/me/consents/terms_of_service/accept", body("{\"version\":\"\(terms)", bytes, "\"}"), json),
                        (
                            "POST", "/rest/v1/legal_acceptances",
                            body("{\"user_id\":\"\(user.id)\",\"document_type\":\"privacy_policy\",\"version\":\"", bytes, "\"}"), rest
                        ),
                        ("POST", "/api/users", body("{\"apple_id\":\"", bytes, "\",\"state\":\"AL\"}"), json),
                    ]
                    for (method, path, data, headers) in requests {
                        let reply = try await http.send(method, path, body: data, headers: headers)
                        answers[reply.status, default: 0] += 1
                        #expect(reply.status == 400, "\(name) in \(method) \(path) answered \(reply.status) \(reply.text.prefix(200))")
                    }
                    // Tus metadata is base64: invalid UTF-8 inside it.
                    let tus = try await http.send(
                        "POST", "/api/uploads",
                        headers: user.tus.merging([
                            "Upload-Length": "1",
                            "Upload-Metadata": "type \(Data("resume".utf8).base64EncodedString()),title \(Data(bytes).base64EncodedString())",
                        ]) { a, _ in a })
                    answers[tus.status, default: 0] += 1
                    #expect(tus.status == 400, "\(name) in tus metadata answered \(tus.status) \(tus.text.prefix(200))")
                    // Percent-encoded in query strings.
                    let encoded = bytes.map { String(format: "%%%02X", $0) }.joined()
                    for path in [
                        "/api/documents?schoolId=\(encoded)", "/api/documents?type=\(encoded)", "/api/me/consents/history?before=\(encoded)",
                        "/rest/v1/documents?school_id=eq.\(encoded)", "/rest/v1/legal_documents?type=eq.\(encoded)",
                    ] {
                        let reply = try await http.get(path, headers: path.hasPrefix("/rest") ? rest : user.auth)
                        answers[reply.status, default: 0] += 1
                        #expect(reply.status == 400, "\(name) in the query of \(path) answered \(reply.status) \(reply.text.prefix(200))")
                    }
                }
                #expect(try await Self.tableCounts(harness) == before)
                print(
                    "SECURITY invalid UTF-8: \(invalid.count) byte sequences in 6 JSON bodies, tus metadata and 5 query strings: statuses \(answers.sorted { $0.key < $1.key }); rows unchanged in \(before.count) tables"
                )
            }
        }

        /// A PostgREST read's answer in one comparable word: its status, and for a 200 the rows.
        static func answer(_ reply: HTTPReply) -> String {
            reply.status == 200 ? "200: \(reply.jsonArray.count) row\(reply.jsonArray.count == 1 ? "" : "s")" : "\(reply.status)"
        }

        static let hostile = [
            "Robert'); DROP TABLE documents.documents;--", "' OR '1'='1", "' OR 1=1--", "x'; SELECT pg_sleep(10);--",
            "$$; DELETE FROM accounts.users; $$", "\\'; TRUNCATE audit.records CASCADE; --", "%' AND 1=0 UNION SELECT * FROM accounts.sessions--",
        ]

        @Test func sqlLookingTextIsStoredVerbatimOrRefusedNeverExecuted() async throws {
            try await GatewayHarness.run { harness in
                let user = try await harness.user()
                let http = harness.http
                let terms = try await harness.currentTerms()
                _ = try await harness.upload(Data("x".utf8), as: user, type: "transcript")
                var stored = 0
                var filterAnswers: [String: Set<String>] = [:]
                for text in Self.hostile {
                    // Document text fields, through the native API, read back through native and PostgREST.
                    let created = try await http.send(
                        "POST", "/api/documents",
                        json: ["type": "resume", "title": text, "description": text, "schoolId": text, "fileName": "cv.bin", "length": 1],
                        headers: user.auth)
                    #expect(created.status == 201, "\(text): \(created.status) \(created.text.prefix(200))")
                    let id = try #require(created.json["id"] as? String)
                    // The byte, so the document is complete (lists show complete documents only).
                    #expect(try await harness.tusPatch(user, "/api/uploads/\(id)", offset: 0, Data("z".utf8)).status == 204)
                    let read = try await http.get("/api/documents/\(id)", headers: user.auth)
                    #expect(
                        read.json["title"] as? String == text && read.json["description"] as? String == text
                            && read.json["schoolId"] as? String == text)
                    stored += 1
                    // A user's name and email through seed 004's sign-up.
                    let appleId = "apple.sql." + UUID().uuidString
                    let session = try await harness.signIn(appleId: appleId)
                    let signUp = try await http.send(
                        "POST", "/api/users",
                        json: [
                            "apple_id": appleId, "email": "a@example.com", "name": text, "username": text, "state": "AL",
                            "eligibility_certified": true, "tos_version": terms,
                        ],
                        headers: HTTPClient.bearer(session["sessionToken"] as? String ?? ""))
                    #expect(
                        signUp.status == 200 && signUp.json["name"] as? String == text, "\(text): sign-up \(signUp.status) \(signUp.text.prefix(200))"
                    )
                    // PostgREST filter values are values, never SQL: each filter's answer, as its
                    // status and the rows it matched, must be the same for every text.
                    let encoded = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                    let rest = user.auth.merging(["apikey": user.token]) { a, _ in a }
                    for column in ["school_id", "type", "id"] {
                        let reply = try await http.get("/rest/v1/documents?select=id,school_id&\(column)=eq.\(encoded)", headers: rest)
                        filterAnswers[column, default: []].insert(Self.answer(reply))
                        if reply.status == 200 {
                            #expect(
                                reply.jsonArray.allSatisfy { $0["school_id"] as? String == text },
                                "\(column)=eq.\(text) matched other rows: \(reply.text.prefix(300))")
                        }
                    }
                    let legal = try await http.get("/rest/v1/legal_documents?select=type&type=eq.\(encoded)", headers: rest)
                    filterAnswers["legal_documents.type", default: []].insert(Self.answer(legal))
                    let list = try await http.get("/api/documents?schoolId=\(encoded)", headers: user.auth)
                    #expect(list.json["total"] as? Int == 1, "schoolId filter \(text): \(list.text.prefix(200))")
                }
                // school_id matches exactly the document that holds the text; an enum column
                // and a uuid column refuse a value that is not one of theirs.
                #expect(
                    filterAnswers == ["school_id": ["200: 1 row"], "type": ["400"], "id": ["400"], "legal_documents.type": ["400"]],
                    "\(filterAnswers)")
                // Tables intact and holding exactly what was written.
                let documents = try await harness.database.pool.withConnection { db in
                    try db.query("SELECT count(*)::bigint FROM documents.documents")[0].decode(Int.self, column: 0)
                }
                #expect(documents == Self.hostile.count + 1)
                #expect(try await harness.userCount() == Self.hostile.count + 1)
                try await harness.waitForChained()
                let records = try await harness.database.pool.withConnection { db in
                    try db.query("SELECT count(*)::bigint FROM audit.records")[0].decode(Int.self, column: 0)
                }
                #expect(records >= Self.hostile.count + 1)
                let titles = try await harness.database.pool.withConnection { db in
                    try Set(db.query("SELECT title FROM documents.documents").map { try $0.decode(String.self, column: 0) })
                }
                #expect(titles.isSuperset(of: Self.hostile))
                print(
                    "SECURITY SQL-looking text: \(Self.hostile.count) strings stored and returned verbatim as title, description, schoolId, name, username (\(stored) documents, \(Self.hostile.count) users); PostgREST filters \(filterAnswers.sorted { $0.key < $1.key }.map { "\($0.key) → \($0.value.sorted())" }); \(documents) documents, \(try await harness.userCount()) users, \(records) audit records afterwards"
                )
            }
        }
    }
}
