import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension GatewayIntegration {
    /// `/rest/v1/documents` and the Storage subset, as the Supabase clients call them.
    @Suite(.serialized) struct StorageAndRESTDocumentsTests {
        @Test func documentsTableReadsAsPostgRESTDoes() async throws {
            try await GatewayHarness.run { harness in
                let user = try await harness.user()
                let http = harness.http
                let id = try await harness.upload(Data("%PDF-1.7 tiny".utf8), as: user, type: "transcript", fileName: "grades.bin")
                _ = try await harness.upload(Data("video".utf8), as: user, type: "highlight_video", fileName: "v.bin")
                let keys = ["apikey": user.token, "Authorization": "Bearer " + user.token]
                let single = keys.merging(["Accept": "application/vnd.pgrst.object+json"]) { _, n in n }

                // Seed 002: select the five columns, eq id, .single().
                let one = try await http.get("/rest/v1/documents?select=id,title,file_url,file_type,type&id=eq.\(id.uppercased())", headers: single)
                #expect(one.status == 200, "\(one.text)")
                #expect(Set(one.json.keys) == ["id", "title", "file_url", "file_type", "type"])
                #expect(one.json["id"] as? String == id && one.json["type"] as? String == "transcript")
                #expect(one.json["file_type"] as? String == "application/octet-stream")
                #expect((one.json["file_url"] as? String)?.hasPrefix("\(http.base)/storage/v1/object/sign/documents/\(id)/") == true)

                let all = try await http.get("/rest/v1/documents?select=id,type&order=type.asc", headers: keys)
                #expect(all.jsonArray.map { $0["type"] as? String } == ["highlight_video", "transcript"])
                let videos = try await http.get("/rest/v1/documents?type=eq.highlight_video", headers: keys)
                #expect(videos.jsonArray.count == 1 && videos.jsonArray[0]["is_video"] as? Bool == true)

                // .single() with no row: 406 PGRST116; a bad uuid 22P02; unknown column 42703.
                let none = try await http.get("/rest/v1/documents?select=id&id=eq.\(UUID().uuidString)", headers: single)
                #expect(none.status == 406 && none.json["code"] as? String == "PGRST116")
                let badId = try await http.get("/rest/v1/documents?id=eq.nope", headers: keys)
                #expect(badId.status == 400 && badId.json["code"] as? String == "22P02")
                let column = try await http.get("/rest/v1/documents?select=secret", headers: keys)
                #expect(column.status == 400 && column.json["code"] as? String == "42703")
                // like on a uuid column: PostgreSQL's undefined operator, as PostgREST answers it.
                let op = try await http.get("/rest/v1/documents?id=like.abc", headers: keys)
                #expect(op.status == 404 && op.json["code"] as? String == "42883")
                let unsupported = try await http.get("/rest/v1/documents?title=fts.abc", headers: keys)
                #expect(unsupported.status == 400 && unsupported.json["code"] as? String == "PGRST100")
                // The anon key sees no one's documents; no key at all is 401.
                let anon = try await PostgRESTTests.anonKey()
                let anonymous = try await http.get("/rest/v1/documents?select=id", headers: ["apikey": anon, "Authorization": "Bearer " + anon])
                #expect(anonymous.status == 200 && anonymous.jsonArray.isEmpty)
                #expect(try await http.get("/rest/v1/documents").status == 401)
            }
        }

        @Test(arguments: ByteStore.allCases) func storageDownloadPublicAndSignedURLs(_ store: ByteStore) async throws {
            try await GatewayHarness.run(storage: store) { harness in
                let user = try await harness.user()
                let http = harness.http
                let bytes = GatewayHarness.randomBytes(400_000)
                let id = try await harness.upload(bytes, as: user, fileName: "letter.bin")
                let fileUrl = GatewayHarness.storedFileUrl(
                    try #require(try await http.get("/api/documents/\(id)", headers: user.auth).json["fileUrl"] as? String))
                let objectPath = String(fileUrl.dropFirst("documents/".count))
                let keys = ["apikey": user.token, "Authorization": "Bearer " + user.token]

                // Authenticated download, with ranges.
                let download = try await http.get("/storage/v1/object/documents/\(objectPath)", headers: keys)
                #expect(download.status == 200 && download.body == bytes)
                let authenticated = try await http.get("/storage/v1/object/authenticated/documents/\(objectPath)", headers: keys)
                #expect(authenticated.body == bytes)
                let ranged = try await http.get(
                    "/storage/v1/object/documents/\(objectPath)", headers: keys.merging(["Range": "bytes=-10"]) { _, n in n })
                #expect(ranged.status == 206 && ranged.body == bytes.suffix(10))
                let noSession = try await http.get("/storage/v1/object/documents/\(objectPath)")
                #expect(noSession.status == 401 && noSession.json["statusCode"] as? String == "401")
                let otherBucket = try await http.get("/storage/v1/object/avatars/\(objectPath)", headers: keys)
                #expect(otherBucket.status == 404 && otherBucket.json["message"] as? String == "Bucket not found")
                let missing = try await http.get("/storage/v1/object/documents/\(UUID().uuidString.lowercased())/x.bin", headers: keys)
                #expect(missing.status == 404 && missing.json["error"] as? String == "not_found")

                // Public URLs: the bucket is private.
                let publicURL = try await http.get("/storage/v1/object/public/documents/\(objectPath)")
                #expect(publicURL.status == 404 && publicURL.json["message"] as? String == "Object not found")

                // Signed URL (storage3 sends expiresIn as a string), then the download without a session.
                let signed = try await http.send("POST", "/storage/v1/object/sign/documents/\(objectPath)", json: ["expiresIn": "60"], headers: keys)
                #expect(signed.status == 200, "\(signed.text)")
                let signedURL = try #require(signed.json["signedURL"] as? String)
                #expect(signedURL.hasPrefix("/object/sign/documents/\(objectPath)?token="))
                let viaSigned = try await http.get("/storage/v1" + signedURL)
                #expect(viaSigned.status == 200 && viaSigned.body == bytes)
                let signedRange = try await http.get("/storage/v1" + signedURL, headers: ["Range": "bytes=100-199"])
                #expect(signedRange.status == 206 && signedRange.body == bytes.subdata(in: 100..<200))
                // The token is for that object only.
                let token = String(signedURL.split(separator: "?token=").last!)
                #expect(try await http.get("/storage/v1/object/sign/documents/\(UUID().uuidString.lowercased())/x.bin?token=\(token)").status == 404)
                #expect(try await http.get("/storage/v1/object/sign/documents/\(objectPath)?token=forged").status == 404)
                #expect(try await http.get("/storage/v1/object/sign/documents/\(objectPath)").status == 400)
                // It is a share link: listed, and revoking it ends the URL (410).
                let links = try await http.get("/api/documents/\(id)/share-links", headers: user.auth)
                let link = try #require((links.json["links"] as? [[String: Any]])?.first)
                // Two uses: the download, and the try on another path (counted before the path check);
                // the range request from the same client continued the download's use.
                #expect(link["uses"] as? Int == 2)
                #expect(try await http.send("DELETE", "/api/share-links/\(link["id"] as? String ?? "")", headers: user.auth).status == 204)
                #expect(try await http.get("/storage/v1" + signedURL).status == 410)
                // Bad requests.
                #expect(
                    try await http.send("POST", "/storage/v1/object/sign/documents/\(objectPath)", json: ["expiresIn": "soon"], headers: keys).status
                        == 400)
                #expect(try await http.send("POST", "/storage/v1/object/sign/documents/\(objectPath)", json: ["expiresIn": 60]).status == 401)
            }
        }
    }
}
