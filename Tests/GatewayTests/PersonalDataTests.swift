import Bus
import Contracts
import Crypto
import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension GatewayIntegration {
    /// The user's rights over their data through the real stack: correcting the profile
    /// (`PATCH /api/me`) and the export (`GET /api/me/export`), unpacked and checked part by part.
    @Suite(.serialized) struct PersonalDataTests {
        @Test func correctionChangesOnlyValidFieldsAndRechecksEligibility() async throws {
            try await GatewayHarness.run { harness in
                let user = try await harness.user()
                let http = harness.http
                let before = try await http.get("/api/me", headers: user.auth)
                #expect(before.status == 200 && before.json["state"] as? String == "AL")

                // Each invalid field alone: a clear 4xx naming the problem, and nothing changed.
                let refusals: [([String: Any], Int, String, String)] = [
                    ([:], 400, "invalid_argument", "at least one"),
                    (["name": "   "], 400, "invalid_argument", "name"),
                    (["name": String(repeating: "n", count: 201)], 400, "invalid_argument", "name"),
                    (["name": "Bad\u{0007}Name"], 400, "invalid_argument", "control"),
                    (["email": "not-an-address"], 400, "invalid_argument", "email"),
                    (["email": "two@@example.com"], 400, "invalid_argument", "email"),
                    (["email": "a b@example.com"], 400, "invalid_argument", "email"),
                    (["state": "ZZ"], 400, "invalid_argument", "state"),
                    (["state": "NV"], 403, "restricted_state", "not available in your state"),
                    (["state": 12], 400, "invalid_argument", "state"),
                    // One bad field refuses the whole correction: the good name is not stored either.
                    (["name": "Good Name", "state": "WA"], 403, "restricted_state", "not available"),
                ]
                for (body, status, code, words) in refusals {
                    let reply = try await http.send("PATCH", "/api/me", json: body, headers: user.auth)
                    #expect(reply.status == status, "\(body): \(reply.status) \(reply.text)")
                    #expect(reply.json["error"] as? String == code, "\(body): \(reply.text)")
                    #expect((reply.json["message"] as? String ?? "").lowercased().contains(words.lowercased()), "\(body): \(reply.text)")
                }
                let unchanged = try await http.get("/api/me", headers: user.auth)
                for field in ["name", "email", "state", "eligibilityRulesVersion"] {
                    #expect("\(unchanged.json[field] ?? "nil")" == "\(before.json[field] ?? "nil")", "\(field) changed by a refused correction")
                }
                #expect(try await corrections(harness, user) == 0)
                #expect(try await confirmations(harness, user) == 1)

                // A valid correction: trimmed, stored, recorded (fields, not values), and the new
                // state confirmed again under the rules in force.
                let corrected = try await http.send(
                    "PATCH", "/api/me", json: ["name": "  Jordan Lee ", "email": "jordan@example.org", "state": "tx"],
                    headers: user.auth.merging(["User-Agent": "CompassTest/1"]) { _, new in new })
                #expect(corrected.status == 200, "\(corrected.text)")
                #expect(corrected.json["name"] as? String == "Jordan Lee")
                #expect(corrected.json["email"] as? String == "jordan@example.org")
                #expect(corrected.json["state"] as? String == "TX")
                let read = try await http.get("/api/me", headers: user.auth)
                #expect(read.json["name"] as? String == "Jordan Lee" && read.json["state"] as? String == "TX")
                #expect(try await corrections(harness, user) == 1)
                #expect(try await confirmations(harness, user) == 2)
                let recorded = try await harness.database.pool.withConnection { db in
                    try db.query(
                        "SELECT array_to_string(fields, ','), user_agent FROM accounts.profile_corrections WHERE user_id = $1",
                        UUID(uuidString: user.id)!
                    )[0].decode(String.self, String?.self)
                }
                #expect(recorded.0 == "name,email,state" && recorded.1 == "CompassTest/1")
                let newest = try await harness.database.pool.withConnection { db in
                    try db.query(
                        "SELECT state FROM accounts.eligibility_confirmations WHERE user_id = $1 ORDER BY confirmed_at DESC LIMIT 1",
                        UUID(uuidString: user.id)!)[0].decode(String.self, column: 0)
                }
                #expect(newest == "TX")

                // The same values again change and record nothing; one field alone changes only it.
                let same = try await http.send("PATCH", "/api/me", json: ["name": "Jordan Lee", "state": "TX"], headers: user.auth)
                #expect(same.status == 200 && same.json["name"] as? String == "Jordan Lee")
                #expect(try await corrections(harness, user) == 1)
                let nameOnly = try await http.send("PATCH", "/api/me", json: ["name": "J. Lee"], headers: user.auth)
                #expect(
                    nameOnly.status == 200 && nameOnly.json["email"] as? String == "jordan@example.org" && nameOnly.json["state"] as? String == "TX")
                #expect(try await corrections(harness, user) == 2)
                #expect(try await confirmations(harness, user) == 2)

                // Without a session: 401, nothing changed.
                let anonymous = try await http.send("PATCH", "/api/me", json: ["name": "Nobody"])
                #expect(anonymous.status == 401)

                // The correction records go with the account.
                let deletion = try await http.send("POST", "/api/me/deletion", headers: user.auth)
                let requestId = try #require(deletion.json["requestId"] as? String)
                #expect(try await http.send("POST", "/api/me/deletion/\(requestId)/confirm", headers: user.auth).status == 200)
                #expect(try await corrections(harness, user) == 0)
                #expect(try await confirmations(harness, user) == 0)
            }
        }

        @Test func exportHoldsEverythingAndVerifies() async throws {
            try await GatewayHarness.run(gateway: ["GATEWAY_RATE_LIMIT_EXPORT_PER_USER": "2/1h,burst=2"]) { harness in
                let user = try await harness.user()
                let other = try await harness.user()
                let http = harness.http
                // Two receipts (the sign-up's acceptance and a privacy acknowledgement), a
                // correction, documents crossing the chunk size, an unfinished upload, a share link used once.
                let privacy = try await harness.legalClient.call(LegalCurrent.self, .init(type: .privacyPolicy)).summary.version
                let acknowledged = try await http.send(
                    "POST", "/api/me/consents/privacy_policy/acknowledge", json: ["version": privacy], headers: user.auth)
                #expect(acknowledged.status == 201, "\(acknowledged.text)")
                #expect(try await http.send("PATCH", "/api/me", json: ["name": "Exported Person"], headers: user.auth).status == 200)
                let big = GatewayHarness.randomBytes(GatewayHarness.chunkSize * 2 + 12_345)
                let small = Data("%PDF-1.4 small transcript\n%%EOF".utf8)
                let bigId = try await harness.upload(big, as: user, type: "highlight_video", fileName: "game film.mp4")
                let smallId = try await harness.upload(small, as: user, type: "transcript", fileName: "transcript.pdf")
                let unfinished = try await harness.tusCreate(user, length: 1000, fileName: "half.bin")
                _ = try await harness.tusPatch(user, unfinished, offset: 0, Data(repeating: 7, count: 400))
                let unfinishedId = String(unfinished.split(separator: "/").last!).lowercased()
                let share = try await http.send("POST", "/api/documents/\(smallId)/share-links", json: ["expiresInSeconds": 3600], headers: user.auth)
                let shareToken = try #require(share.json["token"] as? String)
                #expect(try await http.get("/api/shared/\(shareToken)").status == 200)
                _ = try await harness.upload(Data("someone else's".utf8), as: other, fileName: "other.bin")

                let reply = try await http.get("/api/me/export", headers: user.auth)
                #expect(reply.status == 200, "\(reply.text.prefix(300))")
                #expect(reply.header("Content-Type") == "application/zip")
                #expect(reply.header("Content-Disposition")?.hasPrefix("attachment; filename=\"recruiting-compass-export-") == true)
                #expect(reply.header("Content-Length") == nil, "streamed (chunked), never assembled first")
                #expect(reply.header("Cache-Control") == "no-store")

                let archive = try ZipReader.entries(of: reply.body)
                #expect(archive.map(\.name).first == "README.txt" && archive.map(\.name).last == "manifest.json")
                let files = Dictionary(uniqueKeysWithValues: archive.map { ($0.name, $0.data) })
                try await ZipReader.checkWithUnzip(reply.body)
                let manifestData = try #require(files["manifest.json"])
                let manifest = try #require(try JSONSerialization.jsonObject(with: manifestData) as? [String: Any])
                #expect(manifest["format"] as? String == "recruiting-compass-export/1")
                #expect((manifest["userId"] as? String)?.lowercased() == user.id.lowercased())

                // Profile, eligibility, correction, sessions (no secret of any kind).
                let profile = try #require(manifest["profile"] as? [String: Any])
                #expect(profile["name"] as? String == "Exported Person" && profile["state"] as? String == "AL")
                #expect((manifest["eligibilityConfirmations"] as? [[String: Any]])?.count == 1)
                #expect((manifest["profileCorrections"] as? [[String: Any]])?.first?["fields"] as? [String] == ["name"])
                let sessions = try #require(manifest["sessions"] as? [[String: Any]])
                #expect(sessions.count == 1 && sessions[0]["id"] is String && sessions[0]["expiresAt"] is String)
                let text = String(decoding: reply.body, as: UTF8.self)
                let storedHashes = try await harness.database.pool.withConnection { db in
                    try db.query("SELECT refresh_token_hash FROM accounts.sessions WHERE user_id = $1", UUID(uuidString: user.id)!).map {
                        try $0.decode(String.self, column: 0)
                    }
                }
                #expect(!storedHashes.isEmpty)
                for secret in storedHashes + [user.token, shareToken] { #expect(!text.contains(secret), "a secret is in the export") }
                #expect(!text.contains(other.id.lowercased()), "another user's data is in the export")

                // Receipts: each signature verifies offline with the key in the manifest, which is
                // Audit's key, and each receipt checks against the trail.
                let consents = try #require(manifest["consents"] as? [String: Any])
                let key = try #require(consents["publicKey"] as? String)
                #expect(key == (try await harness.auditClient.call(AuditPublicKey.self, Empty())).publicKey)
                let keyBytes = try #require(Data(base64Encoded: key))
                let publicKey = try Curve25519.Signing.PublicKey(rawRepresentation: keyBytes)
                let records = try #require(consents["records"] as? [[String: Any]])
                #expect(records.count == 2)
                #expect(Set(records.compactMap { ($0["receipt"] as? [String: Any])?["action"] as? String }) == ["accept", "acknowledge"])
                for record in records {
                    let receiptObject = try #require(record["receipt"] as? [String: Any])
                    let receiptJSON = try JSONSerialization.data(withJSONObject: receiptObject)
                    let receipt = try BusJSON.decoder().decode(ConsentReceipt.self, from: receiptJSON)
                    let signature = try #require(Data(base64Encoded: receipt.signature))
                    #expect(publicKey.isValidSignature(signature, for: Data(receipt.signedText.utf8)), "receipt \(receipt.recordId) does not verify")
                    var forged = receipt
                    forged.version += "x"
                    #expect(!publicKey.isValidSignature(signature, for: Data(forged.signedText.utf8)))
                    let online = try await http.send("POST", "/api/receipts/verify", json: receiptObject)
                    #expect(online.json["valid"] as? Bool == true, "\(online.text)")
                }

                // Documents: metadata of all three, bytes of the two complete ones, equal to what
                // was uploaded and to the SHA-256 the manifest states.
                let documents = try #require(manifest["documents"] as? [[String: Any]])
                #expect(documents.count == 3)
                let byId = Dictionary(
                    uniqueKeysWithValues: documents.map { ((($0["document"] as? [String: Any])?["id"] as? String ?? "").lowercased(), $0) })
                for (id, bytes) in [(bigId.lowercased(), big), (smallId.lowercased(), small)] {
                    let entry = try #require(byId[id])
                    let path = try #require(entry["file"] as? String)
                    #expect(path.hasPrefix("documents/\(id)/"))
                    #expect(files[path] == bytes, "\(path) differs from the upload")
                    #expect((entry["document"] as? [String: Any])?["sha256"] as? String == GatewayHarness.sha256(bytes))
                    let listed = (manifest["files"] as? [[String: Any]])?.first { $0["path"] as? String == path }
                    #expect(listed?["sha256"] as? String == GatewayHarness.sha256(bytes) && listed?["bytes"] as? Int == bytes.count)
                }
                #expect(
                    try #require(byId[bigId.lowercased()])["file"] as? String == "documents/\(bigId.lowercased())/game_film.mp4",
                    "the archive path is the file URL")
                let half = try #require(byId[unfinishedId])
                #expect(half["file"] == nil || half["file"] is NSNull)
                #expect(half["bytesNotIncluded"] as? String == "the upload was not finished")
                #expect((half["document"] as? [String: Any])?["committedBytes"] as? Int == 400)
                let links = try #require(manifest["shareLinks"] as? [[String: Any]])
                #expect(links.count == 1 && (links[0]["documentId"] as? String)?.lowercased() == smallId.lowercased())
                #expect((links[0]["useLog"] as? [[String: Any]])?.count == 1 && links[0]["uses"] as? Int == 1)
                #expect(files["README.txt"].map { String(decoding: $0, as: UTF8.self).contains("recruiting-compass-receipt-v1") } == true)

                // Rate limited per user: the burst of 2 is spent by the second export.
                #expect(try await http.get("/api/me/export", headers: user.auth).status == 200)
                let limited = try await http.get("/api/me/export", headers: user.auth)
                #expect(limited.status == 429 && limited.header("Retry-After") != nil && limited.json["error"] as? String == "rate_limited")
                #expect(try await http.get("/api/me/export", headers: other.auth).status == 200, "another user's budget is separate")
                #expect(try await http.get("/api/me/export").status == 401)
            }
        }

        /// A 48 MiB document exported with the gateway's peak memory growing by far less than the
        /// archive: the bytes pass through one chunk at a time, the archive is never assembled.
        @Test func exportStreamsWithinBoundedMemory() async throws {
            try await GatewayHarness.run(documents: ["DOCUMENTS_MAX_FILE_SIZE": String(64 << 20)]) { harness in
                let user = try await harness.user()
                let bytes = GatewayHarness.randomBytes(48 << 20)
                _ = try await harness.upload(bytes, as: user, type: "highlight_video", fileName: "season.mp4", patchSize: 8 << 20)
                try harness.resetPeakMemory(of: "Gateway")
                let before = try harness.peakMemory(of: "Gateway")
                let start = ContinuousClock.now
                let reply = try await harness.http.get("/api/me/export", headers: user.auth)
                let elapsed = ContinuousClock.now - start
                let growth = try harness.peakMemory(of: "Gateway") - before
                #expect(reply.status == 200)
                let entries = try ZipReader.entries(of: reply.body)
                #expect(entries.first { $0.name.hasSuffix("/season.mp4") }?.data == bytes)
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                print(
                    "export of a 48 MiB document: \(reply.body.count >> 20) MiB archive in \(String(format: "%.2f", seconds)) s, gateway peak memory growth \(growth >> 20) MiB"
                )
                #expect(growth < 16 << 20, "the gateway's peak memory grew by \(growth >> 20) MiB for a \(reply.body.count >> 20) MiB archive")

                // Figures (printed, not asserted): the export against the plain download of the same
                // bytes, medians of 3 rounds each, wall time and the gateway's CPU per request.
                let id = try #require(entries.first { $0.name.hasSuffix("/season.mp4") }?.name.split(separator: "/")[1])
                var rounds: [String: [(wall: Double, cpu: Double)]] = [:]
                for _ in 0..<3 {
                    for (label, path) in [("download", "/api/documents/\(id)/content"), ("export", "/api/me/export")] {
                        let cpuBefore = try Self.cpuSeconds(of: harness, "Gateway")
                        let began = ContinuousClock.now
                        let answer = try await harness.http.get(path, headers: user.auth)
                        let took = ContinuousClock.now - began
                        #expect(answer.status == 200)
                        let wall = Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
                        rounds[label, default: []].append((wall, try Self.cpuSeconds(of: harness, "Gateway") - cpuBefore))
                    }
                }
                func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
                let (download, export) = (rounds["download"]!, rounds["export"]!)
                print(
                    String(
                        format:
                            "export vs download of 48 MiB (medians of 3): wall %.3f s vs %.3f s (ratio %.2f), gateway CPU %.2f s vs %.2f s (ratio %.2f)",
                        median(export.map(\.wall)), median(download.map(\.wall)), median(export.map(\.wall)) / median(download.map(\.wall)),
                        median(export.map(\.cpu)), median(download.map(\.cpu)), median(export.map(\.cpu)) / max(0.01, median(download.map(\.cpu)))))
            }
        }

        /// User plus system CPU time of one executable so far (`/proc/<pid>/stat`, 100 ticks a second).
        static func cpuSeconds(of harness: GatewayHarness, _ name: String) throws -> Double {
            let pid = try #require(harness.pid(of: name))
            let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
            let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
            return (Double(fields[11]) ?? 0) / 100 + (Double(fields[12]) ?? 0) / 100
        }

        func corrections(_ harness: GatewayHarness, _ user: GatewayHarness.User) async throws -> Int {
            try await harness.database.pool.withConnection { db in
                try db.query("SELECT count(*)::bigint FROM accounts.profile_corrections WHERE user_id = $1", UUID(uuidString: user.id)!)[0].decode(
                    Int.self, column: 0)
            }
        }

        func confirmations(_ harness: GatewayHarness, _ user: GatewayHarness.User) async throws -> Int {
            try await harness.database.pool.withConnection { db in
                try db.query("SELECT count(*)::bigint FROM accounts.eligibility_confirmations WHERE user_id = $1", UUID(uuidString: user.id)!)[0]
                    .decode(Int.self, column: 0)
            }
        }
    }
}
