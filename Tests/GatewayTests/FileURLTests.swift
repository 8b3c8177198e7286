import Contracts
import Crypto
import Foundation
import GatewayTestSupport
import TestSupport
import Testing

@testable import GatewayService

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension GatewayIntegration {
    /// A document's `file_url` is an absolute, signed, expiring link that a plain HTTP client opens
    /// with no headers (seed 002's `URLSession.download`, `<video src>`, `<iframe src>`); every
    /// other URL the API answers is absolute too.
    @Suite(.serialized) struct FileURLTests {
        static let key = "file-url-tests-key-0123456789abcdef-0123"

        @Test(arguments: ByteStore.allCases) func fileUrlOpensWithoutHeadersWithRangesAndCacheHeaders(_ store: ByteStore) async throws {
            try await GatewayHarness.run(gateway: ["GATEWAY_FILE_URL_KEYS": Self.key, "GATEWAY_FILE_URL_LIFETIME": "10m"], storage: store) {
                harness in
                let user = try await harness.user()
                let http = harness.http
                let bytes = Data("%PDF-1.7\n".utf8) + GatewayHarness.randomBytes(600_000) + Data("\n%%EOF".utf8)
                let name = "Zeugnis Müller \"2025\".pdf"
                let id = try await harness.upload(bytes, as: user, fileType: "application/pdf", fileName: name)
                let row = try await http.get("/api/documents/\(id)", headers: user.auth)
                let fileUrl = try #require(row.json["fileUrl"] as? String)
                #expect(row.json["fileName"] as? String == name)
                #expect(fileUrl.hasPrefix("\(http.base)/storage/v1/object/sign/documents/\(id)/"), "\(fileUrl)")
                #expect(fileUrl.contains("?token=f1."))

                // Seed 002, verbatim: URLSession.shared.download(from:), no headers at all.
                let (local, response) = try await URLSession.shared.download(from: URL(string: fileUrl)!)
                defer { try? FileManager.default.removeItem(at: local) }
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                #expect(try Data(contentsOf: local) == bytes)

                // The headers of a download: strong ETag, immutable caching bounded by the link's
                // life, the original name, and the hostile-content guards.
                let whole = try await http.get(fileUrl)
                let etag = "\"\(GatewayHarness.sha256(bytes))\""
                #expect(whole.status == 200 && whole.body == bytes)
                #expect(whole.header("ETag") == etag)
                let cache = try #require(whole.header("Cache-Control"))
                let maxAge = try #require(
                    cache.split(separator: ",").compactMap { $0.trimmingCharacters(in: .whitespaces).split(separator: "=").last.flatMap { Int($0) } }
                        .first)
                #expect(cache.hasPrefix("private, max-age=") && cache.hasSuffix(", immutable") && (540...750).contains(maxAge), "\(cache)")
                #expect(whole.header("Content-Type") == "application/pdf")
                #expect(
                    whole.header("Content-Disposition")
                        == "inline; filename=\"Zeugnis M_ller _2025_.pdf\"; filename*=UTF-8''Zeugnis%20M%C3%BCller%20%222025%22.pdf")
                #expect(whole.header("X-Content-Type-Options") == "nosniff" && whole.header("Content-Security-Policy") == "sandbox")

                // Range, If-None-Match, If-Range.
                let ranged = try await http.get(fileUrl, headers: ["Range": "bytes=1000-1999"])
                #expect(ranged.status == 206 && ranged.body == bytes.subdata(in: 1000..<2000))
                #expect(ranged.header("Content-Range") == "bytes 1000-1999/\(bytes.count)")
                let tail = try await http.get(fileUrl, headers: ["Range": "bytes=-100"])
                #expect(tail.status == 206 && tail.body == bytes.suffix(100))
                #expect(try await http.get(fileUrl, headers: ["If-None-Match": etag]).status == 304)
                let sameCopy = try await http.get(fileUrl, headers: ["Range": "bytes=0-9", "If-Range": etag])
                #expect(sameCopy.status == 206 && sameCopy.body == bytes.prefix(10))
                let otherCopy = try await http.get(fileUrl, headers: ["Range": "bytes=0-9", "If-Range": "\"0000\""])
                #expect(otherCopy.status == 200 && otherCopy.body == bytes)
                let weak = try await http.get(fileUrl, headers: ["Range": "bytes=0-9", "If-Range": "W/" + etag])
                #expect(weak.status == 200)
                #expect(try await http.get(fileUrl, headers: ["Range": "bytes=\(bytes.count)-"]).status == 416)

                // Reading the row again within the rounding step gives the same link (caches hold).
                #expect(try await http.get("/api/documents/\(id)", headers: user.auth).json["fileUrl"] as? String == fileUrl)
                // The absolute URL still names the document for the by-reference lookup.
                let encoded = fileUrl.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let byReference = try await http.get("/api/documents/\(encoded)", headers: user.auth)
                #expect((byReference.json["id"] as? String)?.lowercased() == id, "\(byReference.status) \(byReference.text)")

                // PostgREST rows carry the same kind of link, and it works.
                let keys = ["apikey": user.token, "Authorization": "Bearer " + user.token]
                let rest = try await http.get("/rest/v1/documents?select=id,file_url&id=eq.\(id)", headers: keys)
                let restUrl = try #require(rest.jsonArray.first?["file_url"] as? String)
                #expect(restUrl.hasPrefix(http.base + "/storage/v1/object/sign/documents/\(id)/"))
                #expect(try await http.get(restUrl).body == bytes)

                // A forged, altered or misplaced token is 404; an expired one 410.
                let token = String(fileUrl.split(separator: "?token=").last!)
                let stored = GatewayHarness.storedFileUrl(fileUrl)
                var altered = Array(token)
                altered[altered.count - 2] = altered[altered.count - 2] == "A" ? "B" : "A"
                #expect(try await http.get("/storage/v1/object/sign/\(stored)?token=\(String(altered))").status == 404)
                let otherId = try await harness.upload(Data("x".utf8), as: user, fileName: "x.txt")
                let otherStored = GatewayHarness.storedFileUrl(
                    try #require(try await http.get("/api/documents/\(otherId)", headers: user.auth).json["fileUrl"] as? String))
                #expect(try await http.get("/storage/v1/object/sign/\(otherStored)?token=\(token)").status == 404)
                let links = FileLinks(keys: [SymmetricKey(data: SHA256.hash(data: Data(Self.key.utf8)))], lifetimeSeconds: 600)
                let expires = Int64(Date().timeIntervalSince1970) - 1
                let expired = links.token(documentId: UUID(uuidString: id)!, ownerId: UUID(uuidString: user.id)!, expires: expires)
                let refused = try await http.get("/storage/v1/object/sign/\(stored)?token=\(expired)")
                #expect(refused.status == 410, "\(refused.text)")
                // Signed with another key: not ours.
                let foreign = FileLinks(keys: [SymmetricKey(size: .bits256)], lifetimeSeconds: 600)
                    .token(documentId: UUID(uuidString: id)!, ownerId: UUID(uuidString: user.id)!, expires: expires + 3600)
                #expect(try await http.get("/storage/v1/object/sign/\(stored)?token=\(foreign)").status == 404)

                // Deleting the document ends the link at once.
                #expect(try await http.send("DELETE", "/api/documents/\(id)", headers: user.auth).status == 204)
                #expect(try await http.get(fileUrl).status == 404)
            }
        }

        @Test func everyAnsweredURLIsAbsoluteAndAccountDeletionEndsLinks() async throws {
            try await GatewayHarness.run { harness in
                let user = try await harness.user()
                let http = harness.http
                // Upload Location and the created document.
                let created = try await http.send(
                    "POST", "/api/documents", json: ["type": "resume", "title": "CV", "length": 5, "fileName": "cv.txt", "fileType": "text/plain"],
                    headers: user.auth)
                #expect(created.status == 201)
                let location = try #require(created.header("Location"))
                #expect(location.hasPrefix(http.base + "/api/uploads/"), "\(location)")
                #expect((created.json["fileUrl"] as? String)?.hasPrefix(http.base + "/storage/") == true)
                #expect(try await harness.tusPatch(user, location, offset: 0, Data("hello".utf8)).status == 204)
                let id = String(location.split(separator: "/").last!)
                // Behind a trusted proxy: its forwarded scheme and host.
                let proxied = try await http.get(
                    "/api/documents?limit=5",
                    headers: user.auth.merging(["X-Forwarded-Proto": "https", "X-Forwarded-Host": "compass.example"]) { _, n in n })
                let listed = try #require((proxied.json["documents"] as? [[String: Any]])?.first?["fileUrl"] as? String)
                #expect(listed.hasPrefix("https://compass.example/storage/v1/object/sign/documents/\(id)/cv.txt?token="), "\(listed)")
                // A host that is not a plain host name is not used.
                let odd = try await http.get(
                    "/api/documents/\(id)", headers: user.auth.merging(["X-Forwarded-Host": "evil.example/path?x="]) { _, n in n })
                #expect((odd.json["fileUrl"] as? String)?.hasPrefix("http://127.0.0.1:") == true, "\(odd.text)")
                // Share link url.
                let share = try await http.send("POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 600], headers: user.auth)
                let url = try #require(share.json["url"] as? String)
                #expect(url.hasPrefix(http.base + "/api/shared/"))
                #expect(try await http.get(url).body == Data("hello".utf8))

                // Deleting the account ends the file URL (its documents go with it).
                let fileUrl = try #require(try await http.get("/api/documents/\(id)", headers: user.auth).json["fileUrl"] as? String)
                #expect(try await http.get(fileUrl).status == 200)
                let request = try await http.send("POST", "/api/me/deletion", headers: user.auth)
                let requestId = try #require(request.json["requestId"] as? String)
                #expect(try await http.send("POST", "/api/me/deletion/\(requestId)/confirm", headers: user.auth).status == 200)
                let status = try await withTimeout(.seconds(10), "the file URL to stop working") {
                    while true {
                        // A download racing the deletion may be cut off mid-body: try again.
                        if let status = try? await http.get(fileUrl).status, status != 200 { return status }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                }
                #expect(status == 404)
            }
        }

        /// A `maxUses: 1` link plays a video with many Range requests (one use), then a second
        /// full download, or another client, is refused.
        @Test(arguments: ByteStore.allCases) func shareLinkPlaybackIsOneUse(_ store: ByteStore) async throws {
            try await GatewayHarness.run(storage: store) { harness in
                let user = try await harness.user()
                let http = harness.http
                let video = Data([0, 0, 0, 0x18] + Array("ftypmp42".utf8)) + GatewayHarness.randomBytes(2_000_000)
                let id = try await harness.upload(video, as: user, type: "highlight_video", fileType: "video/mp4", fileName: "game.mp4")
                let share = try await http.send(
                    "POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 600, "maxUses": 1], headers: user.auth)
                let url = try #require(share.json["url"] as? String)
                let player = ["X-Forwarded-For": "198.51.100.7"]
                // Safari's probe, then the stream from the start, then seeks, some at once.
                let probe = try await http.get(url, headers: player.merging(["Range": "bytes=0-1"]) { _, n in n })
                #expect(probe.status == 206 && probe.body == video.prefix(2))
                #expect(probe.header("Content-Security-Policy") == "sandbox" && probe.header("X-Content-Type-Options") == "nosniff")
                #expect(probe.header("Content-Disposition")?.hasPrefix("inline;") == true)
                let start = try await http.get(url, headers: player.merging(["Range": "bytes=0-"]) { _, n in n })
                #expect(start.status == 206 && start.body == video)
                let offsets = (0..<24).map { _ in Int.random(in: 0..<(video.count - 70_000)) }
                let statuses = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for offset in offsets {
                        group.addTask {
                            let part = try await http.get(url, headers: player.merging(["Range": "bytes=\(offset)-\(offset + 65_535)"]) { _, n in n })
                            return part.status == 206 && part.body == video.subdata(in: offset..<(offset + 65_536))
                        }
                    }
                    return try await group.reduce(into: [Bool]()) { $0.append($1) }
                }
                #expect(statuses.count == 24 && statuses.allSatisfy { $0 })
                // A seek back to the start is still the same playback.
                #expect(try await http.get(url, headers: player.merging(["Range": "bytes=0-"]) { _, n in n }).status == 206)
                // A second full download is a second use: refused. So is another client's range.
                #expect(try await http.get(url, headers: player).status == 410)
                #expect(try await http.get(url, headers: ["X-Forwarded-For": "203.0.113.9", "Range": "bytes=0-1"]).status == 410)
                let links = try await http.get("/api/documents/\(id)/share-links", headers: user.auth)
                let link = try #require((links.json["links"] as? [[String: Any]])?.first)
                #expect(link["uses"] as? Int == 1 && (link["useLog"] as? [Any])?.count == 1, "\(link)")
            }
        }

        /// Concurrent full downloads of a `maxUses: 1` link: exactly one gets the bytes. A playback
        /// idle for longer than the grant lifetime is over: its next Range request is a new use.
        @Test func usesAreCountedOnceUnderConcurrencyAndThePlaybackWindowCloses() async throws {
            try await GatewayHarness.run(documents: ["DOCUMENTS_SHARE_GRANT_LIFETIME": "2s"]) { harness in
                let user = try await harness.user()
                let http = harness.http
                let bytes = GatewayHarness.randomBytes(50_000)
                let id = try await harness.upload(bytes, as: user)
                let share = try await http.send(
                    "POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 600, "maxUses": 1], headers: user.auth)
                let url = try #require(share.json["url"] as? String)
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for client in 0..<8 {
                        group.addTask { try await http.get(url, headers: ["X-Forwarded-For": "192.0.2.\(client + 1)"]).status }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.sorted() == [200] + Array(repeating: 410, count: 7), "\(statuses)")

                let second = try await http.send(
                    "POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 600, "maxUses": 1], headers: user.auth)
                let secondURL = try #require(second.json["url"] as? String)
                let player = ["X-Forwarded-For": "198.51.100.20", "Range": "bytes=0-"]
                #expect(try await http.get(secondURL, headers: player).status == 206)
                try await Task.sleep(for: .milliseconds(800))
                #expect(try await http.get(secondURL, headers: player).status == 206)
                try await Task.sleep(for: .milliseconds(800))
                // Still inside the window: it slides with each request.
                #expect(try await http.get(secondURL, headers: player).status == 206)
                try await Task.sleep(for: .milliseconds(2_600))
                #expect(try await http.get(secondURL, headers: player).status == 410)
            }
        }

        /// User content that a browser could run (HTML, SVG, anything unknown) always goes out as
        /// an attachment, with nosniff and a sandbox policy, on every download route.
        @Test func hostileContentIsAnAttachment() async throws {
            try await GatewayHarness.run { harness in
                let user = try await harness.user()
                let http = harness.http
                let html = Data("<html><script>alert(document.cookie)</script></html>".utf8)
                let svg = Data(#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#.utf8)
                let cases: [(Data, String, String, Bool)] = [
                    (html, "text/html", "page.html", false), (svg, "image/svg+xml", "logo.svg", false),
                    (Data("a,b".utf8), "text/csv", "stats.csv", false), (Data("plain".utf8), "text/plain", "notes.txt", true),
                    (Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0]), "image/png", "p.png", true),
                ]
                for (bytes, type, name, inline) in cases {
                    let id = try await harness.upload(bytes, as: user, fileType: type, fileName: name)
                    let fileUrl = try #require(try await http.get("/api/documents/\(id)", headers: user.auth).json["fileUrl"] as? String)
                    let share = try await http.send("POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 60], headers: user.auth)
                    let shared = try #require(share.json["url"] as? String)
                    let replies = [
                        try await http.get("/api/documents/\(id)/content", headers: user.auth), try await http.get(fileUrl),
                        try await http.get(shared),
                        try await http.get("/storage/v1/object/\(GatewayHarness.storedFileUrl(fileUrl))", headers: user.auth),
                    ]
                    for reply in replies {
                        #expect(reply.status == 200 && reply.body == bytes)
                        #expect(
                            reply.header("Content-Disposition")?.hasPrefix(inline ? "inline;" : "attachment;") == true, "\(type): \(reply.headers)")
                        #expect(reply.header("X-Content-Type-Options") == "nosniff", "\(type)")
                        #expect(reply.header("Content-Security-Policy") == "sandbox", "\(type)")
                        #expect(reply.header("Content-Type") == type, "\(type)")
                    }
                }
            }
        }
    }

    /// ``FileLinks`` alone: expiry rounding, key rotation.
    struct FileLinkSigningTests {
        @Test func rotationVerifiesOldKeysAndExpiryRoundsUp() {
            let (old, new) = (SymmetricKey(size: .bits256), SymmetricKey(size: .bits256))
            let document = Document(
                id: UUID(), ownerId: UUID(), type: .resume, title: "t", description: nil, fileUrl: "documents/x/cv.pdf", fileType: nil, version: 1,
                schoolId: nil, createdAt: Date(), length: 1, committedBytes: 1, sha256: nil, bytesState: .available, possiblyCorrupt: false)
            let before = FileLinks(keys: [old], lifetimeSeconds: 3600)
            let after = FileLinks(keys: [new, old], lifetimeSeconds: 3600)
            let now = Date(timeIntervalSince1970: 1_800_000_123)
            let expires = before.expiry(now: now)
            #expect(expires >= 1_800_000_123 + 3600 && expires < 1_800_000_123 + 3600 + 900 && expires % 900 == 0)
            let token = before.token(documentId: document.id, ownerId: document.ownerId, expires: expires)
            #expect(after.verify(token, for: document, now: now) == .valid(expires: expires))
            #expect(FileLinks(keys: [new], lifetimeSeconds: 3600).verify(token, for: document, now: now) == .invalid)
            #expect(after.verify(token, for: document, now: Date(timeIntervalSince1970: Double(expires))) == .expired)
            var someoneElses = document
            someoneElses.ownerId = UUID()
            #expect(after.verify(token, for: someoneElses, now: now) == .invalid)
            for bad in ["f1.", "f1.x.y", "f1.123", "f1.99999999999999.AAAA", "nope", "f1.-5." + String(token.split(separator: ".").last!)] {
                #expect(after.verify(bad, for: document, now: now) == .invalid, "\(bad)")
            }
        }
    }
}
