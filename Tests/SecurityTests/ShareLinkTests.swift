import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension SecurityTests {
    /// Share links over HTTP: tokens too long and random to guess, and dead links answering 410.
    @Suite(.serialized) struct ShareLinkTests {
        static let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

        static func token(of created: HTTPReply) throws -> String {
            let url = try #require(created.json["url"] as? String, "no url in \(created.text)")
            return String(try #require(url.split(separator: "/").last))
        }

        @Test func tokensCarryAtLeast128RandomBitsAndNeverRepeat() async throws {
            try await GatewayHarness.run { harness in
                let user = try await harness.user()
                let id = try await harness.upload(Data("shared".utf8), as: user)
                let count = 1_000
                let tokens = try await withThrowingTaskGroup(of: [String].self) { group in
                    for worker in 0..<8 {
                        group.addTask {
                            var made: [String] = []
                            for _ in stride(from: worker, to: count, by: 8) {
                                let created = try await harness.http.send(
                                    "POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 600], headers: user.auth)
                                guard created.status == 201 else { throw TestSupportError("share link answered \(created.status): \(created.text)") }
                                made.append(try Self.token(of: created))
                            }
                            return made
                        }
                    }
                    return try await group.reduce(into: [String]()) { $0 += $1 }
                }
                #expect(tokens.count == count)
                #expect(Set(tokens).count == count, "\(count - Set(tokens).count) repeated tokens")
                var minimumBits = Int.max
                var bitCounts = [Int](repeating: 0, count: 512)
                for token in tokens {
                    #expect(token.allSatisfy { Self.alphabet.contains($0) }, "\(token) is not base64url")
                    let bytes = try #require(ForgedTokens.decodeBase64URL(Substring(token)), "\(token) does not decode")
                    minimumBits = min(minimumBits, bytes.count * 8)
                    for (index, byte) in bytes.prefix(64).enumerated() {
                        for bit in 0..<8 where byte & (1 << bit) != 0 { bitCounts[index * 8 + bit] += 1 }
                    }
                }
                #expect(minimumBits >= 128, "a token has only \(minimumBits) bits")
                // Every bit position set in about half of the tokens (a counter or a timestamp
                // would leave some always 0 or 1): 500 ± 100 is more than 6 standard deviations.
                let positions = min(minimumBits, 512)
                let skewed = (0..<positions).filter { abs(bitCounts[$0] - count / 2) > 100 }
                #expect(skewed.isEmpty, "bit positions far from random: \(skewed)")
                let links = try await harness.http.get("/api/documents/\(id)/share-links", headers: user.auth)
                #expect((links.json["links"] as? [Any])?.count == count)
                print(
                    "SECURITY share tokens: \(count) links, \(Set(tokens).count) distinct, \(minimumBits) bits each (base64url, \(tokens[0].count) characters), \(positions) bit positions each set in \(bitCounts.prefix(positions).min() ?? 0)–\(bitCounts.prefix(positions).max() ?? 0) of \(count) tokens"
                )
            }
        }

        @Test func deadLinksAre410AndGuessedTokensAre404() async throws {
            try await GatewayHarness.run { harness in
                let user = try await harness.user()
                let http = harness.http
                let bytes = GatewayHarness.randomBytes(5_000)
                let id = try await harness.upload(bytes, as: user)
                let fileUrl = GatewayHarness.storedFileUrl(
                    try #require(try await http.get("/api/documents/\(id)", headers: user.auth).json["fileUrl"] as? String))

                // Expired: a 1-second link.
                let shortLived = try await http.send("POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 1], headers: user.auth)
                #expect(shortLived.status == 201, "\(shortLived.text)")
                let expiredPath = "/api/shared/" + (try Self.token(of: shortLived))
                let start = ContinuousClock.now
                var expired = try await http.get(expiredPath)
                while expired.status != 410, ContinuousClock.now - start < .seconds(10) {
                    try await Task.sleep(for: .milliseconds(250))
                    expired = try await http.get(expiredPath)
                }
                #expect(expired.status == 410 && expired.json["error"] as? String == "gone", "expired: \(expired.status) \(expired.text)")
                let expiredAfter = ContinuousClock.now - start
                #expect(expired.body.count < 1_000 && expired.body.range(of: bytes.prefix(64)) == nil)

                // Revoked.
                let revocable = try await http.send("POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 600], headers: user.auth)
                let revokedPath = "/api/shared/" + (try Self.token(of: revocable))
                #expect(try await http.get(revokedPath).body == bytes)
                let linkId = try #require((revocable.json["link"] as? [String: Any])?["id"] as? String)
                #expect(try await http.send("DELETE", "/api/share-links/\(linkId)", headers: user.auth).status == 204)
                let revoked = try await http.get(revokedPath)
                #expect(revoked.status == 410 && revoked.json["error"] as? String == "gone", "revoked: \(revoked.status)")
                let revokedRange = try await http.get(revokedPath, headers: ["Range": "bytes=0-9"])
                #expect(revokedRange.status == 410)

                // Exhausted: maxUses 2.
                let limited = try await http.send(
                    "POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 600, "maxUses": 2], headers: user.auth)
                let limitedPath = "/api/shared/" + (try Self.token(of: limited))
                #expect(try await http.get(limitedPath).status == 200)
                #expect(try await http.send("HEAD", limitedPath).status < 500)
                var exhausted = try await http.get(limitedPath)
                if exhausted.status == 200 { exhausted = try await http.get(limitedPath) }
                #expect(exhausted.status == 410 && exhausted.json["error"] as? String == "gone", "exhausted: \(exhausted.status)")

                // A Storage signed URL, revoked through its share link: 410 in Storage's shape.
                let objectPath = String(fileUrl.split(separator: "/", maxSplits: 1)[1])
                let signed = try await http.send(
                    "POST", "/storage/v1/object/sign/documents/\(objectPath)", json: ["expiresIn": 600], headers: user.auth)
                let signedURL = try #require(signed.json["signedURL"] as? String)
                #expect(try await http.get("/storage/v1" + signedURL).body == bytes)
                let links = try #require(try await http.get("/api/documents/\(id)/share-links", headers: user.auth).json["links"] as? [[String: Any]])
                for link in links {
                    if let linkId = link["id"] as? String { _ = try await http.send("DELETE", "/api/share-links/\(linkId)", headers: user.auth) }
                }
                let deadSigned = try await http.get("/storage/v1" + signedURL)
                #expect(
                    deadSigned.status == 410 && deadSigned.json["statusCode"] as? String == "410",
                    "revoked signed URL: \(deadSigned.status) \(deadSigned.text)")

                // Guessed and mutated tokens of a live link: 404, and no use counted.
                let live = try await http.send("POST", "/api/documents/\(id)/share-links", json: ["expiresInSeconds": 600], headers: user.auth)
                let token = try Self.token(of: live)
                let liveId = try #require((live.json["link"] as? [String: Any])?["id"] as? String)
                var guesses: [String] = [
                    String(token.dropLast()), token + "A", String(token.dropFirst()), token.uppercased(), token.lowercased(),
                    String(token.reversed()), String(repeating: "A", count: token.count), "", "..", "%00",
                ]
                for position in stride(from: 0, to: token.count, by: max(1, token.count / 12)) {
                    var characters = Array(token)
                    characters[position] = characters[position] == "A" ? "B" : "A"
                    guesses.append(String(characters))
                }
                for _ in 0..<100 { guesses.append(ForgedTokens.base64URL(GatewayHarness.randomBytes(32))) }
                var notFound = 0
                for guess in Set(guesses) where guess != token {
                    let reply = try await http.get("/api/shared/" + guess)
                    #expect([404, 400].contains(reply.status), "guess \(guess) answered \(reply.status)")
                    #expect(reply.body.count < 1_000)
                    let storage = try await http.get("/storage/v1/object/sign/\(fileUrl)?token=\(guess)")
                    #expect([404, 400].contains(storage.status), "signed guess \(guess) answered \(storage.status)")
                    if reply.status == 404 { notFound += 1 }
                }
                let listed = try #require(
                    try await http.get("/api/documents/\(id)/share-links", headers: user.auth).json["links"] as? [[String: Any]])
                let uses = listed.first { ($0["id"] as? String) == liveId }?["uses"] as? Int
                #expect(uses == 0, "guesses counted uses: \(String(describing: uses))")
                #expect(try await http.get("/api/shared/" + token).body == bytes)
                print(
                    "SECURITY share links: expired after \(expiredAfter) → 410, revoked → 410 (also with Range, and a revoked signed URL → Storage 410), exhausted after 2 uses → 410; \(Set(guesses).count) guessed/mutated tokens → \(notFound) × 404 and 0 uses counted"
                )
            }
        }
    }
}
