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

                // Hostile names are not refused: each is reduced to one plain segment of
                // documents/<id>/<name> (unsafe characters become `_`, leading dots go).
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
                        #expect(reply.status == 201, "\(how) \(name): \(reply.status) \(reply.text.prefix(200))")
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

                #expect(created == Self.names.count * 2)

                // References that climb out of the caller's document into the owner's, or the disk.
                let ownerPath = String(ownerFileUrl.dropFirst("documents/".count))
                let climbs = [
                    "documents/\(otherDocument)/../\(ownerPath)", "documents/../\(ownerFileUrl)", "documents/../../etc/passwd",
                    "documents/\(otherDocument)/..%2F..%2Fetc%2Fpasswd", "file:///etc/passwd", "/etc/passwd", "documents/./\(ownerPath)",
                ]
                // Each reference's answer, by where it was sent: one status each, the one the
                // code promises (400: not a reference of ours; 404: a well-formed reference that
                // names no document of the caller's). The `..%2F` name is one such reference to
                // the native routes; Storage decodes the object path first and refuses its `..`.
                var answers: [String: [Int]] = [:]
                for climb in climbs {
                    let encoded = climb.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                    for path in ["/api/documents/\(encoded)", "/api/documents/\(encoded)/content"] {
                        let reply = try await http.get(path, headers: other.auth)
                        answers[climb, default: []].append(reply.status)
                        #expect(reply.body.range(of: secret.prefix(32)) == nil)
                    }
                    // Storage, with the dots sent as they are (curl --path-as-is) and percent-encoded.
                    let object = String(climb.dropFirst(climb.hasPrefix("documents/") ? "documents/".count : 0))
                    let raw = try await CurlProbe.status(
                        http.base + "/storage/v1/object/documents/" + object, headers: ["Authorization": "Bearer " + other.token])
                    answers[climb, default: []].append(raw)
                    let dotted = object.replacingOccurrences(of: ".", with: "%2E")
                    let reply = try await http.get("/storage/v1/object/documents/" + dotted, headers: other.auth)
                    answers[climb, default: []].append(reply.status)
                    #expect(reply.body.range(of: secret.prefix(32)) == nil)
                }
                // [native, content, Storage raw, Storage encoded]
                let expected: [String: [Int]] = [
                    climbs[0]: [400, 400, 400, 400], climbs[1]: [400, 400, 400, 400], climbs[2]: [400, 400, 400, 400],
                    climbs[3]: [404, 404, 400, 400], climbs[4]: [400, 400, 400, 400], climbs[5]: [400, 400, 400, 400],
                    climbs[6]: [400, 400, 400, 400],
                ]
                #expect(answers == expected, "\(answers.map { "\($0.key) → \($0.value)" }.sorted())")
                let refused = answers.values.map(\.count).reduce(0, +)
                // The owner's document is untouched and still the owner's alone.
                #expect(try await http.get("/api/documents/\(ownerDocument)/content", headers: owner.auth).body == secret)
                print(
                    "SECURITY path traversal: \(Self.names.count) hostile file names × 2 creation routes → \(created) created, each stored as documents/<id>/<one plain segment>; \(refused) climbing references (native, content, Storage raw and encoded) → \(Set(answers.values.joined()).sorted()), none served another user's bytes"
                )
            }
        }
    }
}
