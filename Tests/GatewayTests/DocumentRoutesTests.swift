import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension GatewayIntegration {
    /// The native documents API under `/api`, through the real gateway and Documents service.
    @Suite(.serialized) struct DocumentRoutesTests {
        @Test(arguments: ByteStore.allCases) func createReadListPositionAndDelete(_ store: ByteStore) async throws {
            try await GatewayHarness.run(storage: store) { harness in
                let user = try await harness.user()
                let http = harness.http
                // Create with JSON, then the bytes through tus at Location.
                let created = try await http.send(
                    "POST", "/api/documents",
                    json: [
                        "type": "resume", "title": "Résumé", "fileType": "application/octet-stream", "fileName": "cv.bin", "length": 5,
                        "schoolId": "s1",
                    ],
                    headers: user.auth)
                #expect(created.status == 201, "\(created.text)")
                let first = try #require(created.json["id"] as? String).lowercased()
                #expect(created.header("Location") == http.base + "/api/uploads/\(first)")
                #expect(created.json["bytesState"] as? String == "uploading")
                let patched = try await harness.tusPatch(user, "/api/uploads/\(first)", offset: 0, Data("hello".utf8))
                #expect(patched.status == 204 && patched.header("Upload-Offset") == "5")

                let byId = try await http.get("/api/documents/\(first)", headers: user.auth)
                #expect(byId.status == 200)
                #expect(byId.json["bytesState"] as? String == "available")
                #expect(byId.json["sha256"] as? String == GatewayHarness.sha256(Data("hello".utf8)))
                let fileUrl = try #require(byId.json["fileUrl"] as? String)
                #expect(fileUrl.contains("/"))
                // By file URL: the reference contains `/` (percent-encoded in the path).
                let encoded = fileUrl.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let byUrl = try await http.get("/api/documents/\(encoded)", headers: user.auth)
                #expect(byUrl.status == 200 && (byUrl.json["id"] as? String)?.lowercased() == first)

                let second = try await harness.upload(Data("second".utf8), as: user, type: "transcript", fileName: "t.bin")
                let third = try await harness.upload(Data("third".utf8), as: user, type: "transcript", fileName: "u.bin")

                // Newest first, keyset pages.
                let all = try await http.get("/api/documents", headers: user.auth)
                #expect(all.status == 200)
                #expect((all.json["documents"] as? [[String: Any]])?.map { ($0["id"] as? String)?.lowercased() } == [third, second, first])
                #expect(all.json["total"] as? Int == 3)
                let page1 = try await http.get("/api/documents?limit=2", headers: user.auth)
                let cursor = try #require(page1.json["nextCursor"] as? String)
                let page2 = try await http.get(
                    "/api/documents?limit=2&after=\(cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)", headers: user.auth)
                #expect((page2.json["documents"] as? [[String: Any]])?.map { ($0["id"] as? String)?.lowercased() } == [first])
                #expect(page2.json["nextCursor"] == nil || page2.json["nextCursor"] is NSNull)
                let transcripts = try await http.get("/api/documents?type=transcript", headers: user.auth)
                #expect(transcripts.json["total"] as? Int == 2)
                let school = try await http.get("/api/documents?schoolId=s1", headers: user.auth)
                #expect(school.json["total"] as? Int == 1)

                // Position: "2 of 3" with neighbours.
                let position = try await http.get("/api/documents/\(second)/position", headers: user.auth)
                #expect(position.status == 200)
                #expect(position.json["position"] as? Int == 2 && position.json["total"] as? Int == 3)
                #expect(
                    (position.json["previousId"] as? String)?.lowercased() == third && (position.json["nextId"] as? String)?.lowercased() == first)
                let inType = try await http.get("/api/documents/\(second)/position?type=transcript", headers: user.auth)
                #expect(inType.json["position"] as? Int == 2 && inType.json["total"] as? Int == 2)

                // Errors.
                #expect(try await http.get("/api/documents").status == 401)
                #expect(try await http.get("/api/documents/\(UUID().uuidString)", headers: user.auth).status == 404)
                let badRef = try await http.get("/api/documents/not-a-reference", headers: user.auth)
                #expect(badRef.status == 400 && badRef.json["error"] as? String == "invalid_argument")
                #expect(try await http.get("/api/documents?type=bogus", headers: user.auth).status == 400)
                // The gateway checks a page size with Documents' own limit and wording.
                for limit in ["0", "201", "ten"] {
                    let refused = try await http.get("/api/documents?limit=\(limit)", headers: user.auth)
                    #expect(refused.status == 400 && refused.json["message"] as? String == "limit must be between 1 and 200", "\(limit)")
                }
                #expect(try await http.get("/api/documents?limit=200", headers: user.auth).status == 200)
                let badType = try await http.send("POST", "/api/documents", json: ["type": "poem", "title": "x", "length": 1], headers: user.auth)
                #expect(badType.status == 400)
                let noTitle = try await http.send("POST", "/api/documents", json: ["type": "resume", "length": 1], headers: user.auth)
                #expect(noTitle.status == 400)
                let notJSON = try await http.send(
                    "POST", "/api/documents", body: Data("x".utf8), headers: user.auth.merging(["Content-Type": "text/plain"]) { _, n in n })
                #expect(notJSON.status == 415)

                // Delete: gone everywhere, a second delete is 404.
                #expect(try await http.send("DELETE", "/api/documents/\(second)", headers: user.auth).status == 204)
                #expect(try await http.get("/api/documents/\(second)", headers: user.auth).status == 404)
                #expect(try await http.send("DELETE", "/api/documents/\(second)", headers: user.auth).status == 404)
                #expect(try await http.get("/api/documents", headers: user.auth).json["total"] as? Int == 2)
                // Deleting by file URL works too.
                #expect(try await http.send("DELETE", "/api/documents/\(encoded)", headers: user.auth).status == 204)
                #expect(try await http.get("/api/documents/\(first)", headers: user.auth).status == 404)
            }
        }

        @Test(arguments: ByteStore.allCases) func shareLinksAndThePublicDownload(_ store: ByteStore) async throws {
            try await GatewayHarness.run(storage: store) { harness in
                let user = try await harness.user()
                let http = harness.http
                let bytes = GatewayHarness.randomBytes(300_000)
                let id = try await harness.upload(bytes, as: user)
                let created = try await http.send("POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 3600], headers: user.auth)
                #expect(created.status == 201, "\(created.text)")
                let url = try #require(created.json["url"] as? String)
                let linkId = try #require((created.json["link"] as? [String: Any])?["id"] as? String)

                // Anyone with the link: no Authorization.
                let download = try await http.get(url)
                #expect(download.status == 200 && download.body == bytes)
                #expect(download.header("ETag") == "\"\(GatewayHarness.sha256(bytes))\"")
                let ranged = try await http.get(url, headers: ["Range": "bytes=1000-1999"])
                #expect(ranged.status == 206 && ranged.body == bytes.subdata(in: 1000..<2000))

                let list = try await http.get("/api/documents/\(id)/share-links", headers: user.auth)
                let links = try #require(list.json["links"] as? [[String: Any]])
                // One use: the range request from the same client continues the download's use.
                #expect(links.count == 1 && links[0]["uses"] as? Int == 1)
                #expect((links[0]["useLog"] as? [[String: Any]])?.count == 1)

                // Revoked: 410 at once; a second revoke changes nothing.
                #expect(try await http.send("DELETE", "/api/share-links/\(linkId)", headers: user.auth).status == 204)
                #expect(try await http.get(url).status == 410)
                #expect(try await http.send("DELETE", "/api/share-links/\(linkId)", headers: user.auth).status == 204)

                // Used up: 410 after maxUses.
                let once = try await http.send(
                    "POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 600, "maxUses": 1], headers: user.auth)
                let onceURL = try #require(once.json["url"] as? String)
                #expect(try await http.get(onceURL).status == 200)
                let exhausted = try await http.get(onceURL)
                #expect(exhausted.status == 410 && exhausted.json["error"] as? String == "gone")

                // Errors.
                #expect(try await http.get("/api/shared/not-a-token").status == 404)
                #expect(
                    try await http.send("POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 0], headers: user.auth).status == 400)
                #expect(try await http.send("POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 60]).status == 401)
                #expect(try await http.send("DELETE", "/api/share-links/nope", headers: user.auth).status == 400)
                #expect(try await http.send("DELETE", "/api/share-links/\(UUID().uuidString)", headers: user.auth).status == 404)
                // A link dies with its document.
                let last = try await http.send("POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 600], headers: user.auth)
                let lastURL = try #require(last.json["url"] as? String)
                #expect(try await http.send("DELETE", "/api/documents/\(id)", headers: user.auth).status == 204)
                #expect(try await http.get(lastURL).status == 404)
            }
        }

        @Test func anotherUsersDocumentsAreOutOfReachOnEveryRoute() async throws {
            try await GatewayHarness.run { harness in
                let (owner, other) = (try await harness.user(), try await harness.user())
                let http = harness.http
                let id = try await harness.upload(Data("private bytes".utf8), as: owner, fileName: "mine.bin")
                let document = try await http.get("/api/documents/\(id)", headers: owner.auth)
                let fileUrl = try #require(document.json["fileUrl"] as? String)
                let encoded = fileUrl.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let path = GatewayHarness.storedFileUrl(fileUrl).split(separator: "/", maxSplits: 1)[1]
                let pending = try await harness.tusCreate(owner, length: 10)

                for (method, route) in [
                    ("GET", "/api/documents/\(id)"), ("GET", "/api/documents/\(encoded)"), ("GET", "/api/documents/\(id)/content"),
                    ("GET", "/api/documents/\(id)/position"), ("GET", "/api/documents/\(id)/share-links"), ("DELETE", "/api/documents/\(id)"),
                    ("GET", "/storage/v1/object/documents/\(path)"),
                ] {
                    let reply = try await http.send(method, route, headers: other.auth)
                    #expect(reply.status == 404, "\(method) \(route) answered \(reply.status)")
                }
                let share = try await http.send("POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 60], headers: other.auth)
                #expect(share.status == 404)
                let sign = try await http.send("POST", "/storage/v1/object/sign/documents/\(path)", json: ["expiresIn": 60], headers: other.auth)
                #expect(sign.status == 404)
                #expect(try await http.send("HEAD", pending, headers: other.tus).status == 404)
                #expect(try await harness.tusPatch(other, pending, offset: 0, Data("0123456789".utf8)).status == 404)
                #expect(try await http.send("DELETE", pending, headers: other.tus).status == 404)
                // Lists and PostgREST show the other user nothing of it.
                #expect(try await http.get("/api/documents", headers: other.auth).json["total"] as? Int == 0)
                let rest = try await http.get(
                    "/rest/v1/documents?select=id&id=eq.\(id)", headers: ["apikey": other.token, "Authorization": "Bearer " + other.token])
                #expect(rest.status == 200 && rest.jsonArray.isEmpty)
                // The owner's link cannot be revoked by the other user.
                let link = try await http.send("POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 60], headers: owner.auth)
                let linkId = try #require((link.json["link"] as? [String: Any])?["id"] as? String)
                #expect(try await http.send("DELETE", "/api/share-links/\(linkId)", headers: other.auth).status == 404)
                // Everything still there for the owner.
                #expect(try await http.get("/api/documents/\(id)/content", headers: owner.auth).body == Data("private bytes".utf8))
                #expect(try await http.send("HEAD", pending, headers: owner.tus).header("Upload-Offset") == "0")
                #expect(try await http.get(try #require(link.json["url"] as? String)).status == 200)
            }
        }
    }
}
