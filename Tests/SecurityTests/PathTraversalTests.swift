import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension SecurityTests {
    /// Path traversal through the HTTP routes: hostile file names at creation (native and tus),
    /// and `..` in document references and Storage object paths, raw and percent-encoded.
    @Suite(.serialized) struct PathTraversalTests {
        static let names = [
            "../../etc/passwd", "..\\..\\windows\\win.ini", "/etc/shadow", "....//....//etc/passwd", "%2e%2e%2fetc", "..", "a/../../b",
        ]

        @Test func fileNamesAndReferencesStayInsideTheCallersDocuments() async throws {
            try await GatewayHarness.run { harness in
                let owner = try await harness.user()
                let other = try await harness.user()
                let http = harness.http
                let secret = GatewayHarness.randomBytes(1_000)
                let ownerDocument = try await harness.upload(secret, as: owner, fileName: "private.bin")
                let ownerFileUrl = GatewayHarness.storedFileUrl(
                    try #require(try await http.get("/api/documents/\(ownerDocument)", headers: owner.auth).json["fileUrl"] as? String))
                let otherDocument = try await harness.upload(Data("mine".utf8), as: other, fileName: "mine.bin")

                // Hostile names: refused, or kept as one plain segment of documents/<id>/<name>.
                var created = 0
                for name in Self.names {
                    let native = try await http.send(
                        "POST", "/api/documents", json: ["type": "resume", "title": "t", "fileName": name, "length": 1], headers: other.auth)
                    let tus = try await http.send(
                        "POST", "/api/uploads",
                        headers: other.tus.merging([
                            "Upload-Length": "1", "Upload-Metadata": GatewayHarness.metadata(["type": "resume", "filename": name]),
                        ]) { a, _ in a })
                    for (how, reply) in [("native", native), ("tus", tus)] {
                        #expect(reply.status == 201 || reply.status == 400, "\(how) \(name): \(reply.status) \(reply.text.prefix(200))")
                        guard reply.status == 201 else { continue }
                        created += 1
                        let id = try #require(reply.json["id"] as? String ?? reply.header("Location")?.split(separator: "/").last.map(String.init))
                        let fileUrl = GatewayHarness.storedFileUrl(
                            try #require(try await http.get("/api/documents/\(id)", headers: other.auth).json["fileUrl"] as? String))
                        let parts = fileUrl.split(separator: "/", omittingEmptySubsequences: false)
                        #expect(
                            parts.count == 3 && parts[0] == "documents" && parts[1].lowercased() == id.lowercased(), "\(how) \(name) → \(fileUrl)")
                        let stored = parts.last ?? ""
                        #expect(!stored.contains("\\") && !stored.hasPrefix(".") && !stored.isEmpty, "\(how) \(name) → \(fileUrl)")
                    }
                }

                // References that climb out of the caller's document into the owner's, or the disk.
                let ownerPath = String(ownerFileUrl.dropFirst("documents/".count))
                let climbs = [
                    "documents/\(otherDocument)/../\(ownerPath)", "documents/../\(ownerFileUrl)", "documents/../../etc/passwd",
                    "documents/\(otherDocument)/..%2F..%2Fetc%2Fpasswd", "file:///etc/passwd", "/etc/passwd", "documents/./\(ownerPath)",
                ]
                var refused = 0
                for climb in climbs {
                    let encoded = climb.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                    for path in ["/api/documents/\(encoded)", "/api/documents/\(encoded)/content"] {
                        let reply = try await http.get(path, headers: other.auth)
                        #expect(reply.status == 400 || reply.status == 404, "\(path): \(reply.status)")
                        #expect(reply.body.range(of: secret.prefix(32)) == nil)
                        refused += 1
                    }
                    // Storage, with the dots sent as they are (curl --path-as-is) and percent-encoded.
                    let object = String(climb.dropFirst(climb.hasPrefix("documents/") ? "documents/".count : 0))
                    let raw = try await CurlProbe.status(
                        http.base + "/storage/v1/object/documents/" + object, headers: ["Authorization": "Bearer " + other.token])
                    #expect([400, 404].contains(raw), "Storage raw \(object): \(raw)")
                    let dotted = object.replacingOccurrences(of: ".", with: "%2E")
                    let reply = try await http.get("/storage/v1/object/documents/" + dotted, headers: other.auth)
                    #expect(
                        [400, 404].contains(reply.status) && reply.body.range(of: secret.prefix(32)) == nil,
                        "Storage encoded \(dotted): \(reply.status)")
                    refused += 2
                }
                // The owner's document is untouched and still the owner's alone.
                #expect(try await http.get("/api/documents/\(ownerDocument)/content", headers: owner.auth).body == secret)
                print(
                    "SECURITY path traversal: \(Self.names.count) hostile file names × 2 creation routes → \(created) created, each stored as documents/<id>/<one plain segment>, the rest 400; \(refused) climbing references (native, content, Storage raw and encoded) → 400/404, none served another user's bytes"
                )
            }
        }
    }
}
