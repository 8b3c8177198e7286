import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension GatewayIntegration {
    /// Document bytes with Range, and tus uploads, through the real gateway and Documents.
    @Suite(.serialized) struct BytesAndTusTests {
        @Test(arguments: ByteStore.allCases) func rangesAreExactByteForByte(_ store: ByteStore) async throws {
            try await GatewayHarness.run(storage: store) { harness in
                let user = try await harness.user()
                let http = harness.http
                // Three and a half chunks of the harness's chunk size: ranges cross chunk boundaries.
                let length = GatewayHarness.chunkSize * 7 / 2
                let bytes = GatewayHarness.randomBytes(length)
                let id = try await harness.upload(bytes, as: user, fileName: "clip.bin", patchSize: 300_000)
                let path = "/api/documents/\(id)/content"
                let etag = "\"\(GatewayHarness.sha256(bytes))\""

                let whole = try await http.get(path, headers: user.auth)
                #expect(whole.status == 200 && whole.body == bytes)
                #expect(whole.header("Accept-Ranges") == "bytes" && whole.header("ETag") == etag)
                #expect(whole.header("Content-Length") == String(length))
                #expect(whole.header("Content-Type") == "application/octet-stream")
                // Not a type a browser shows safely: an attachment.
                #expect(whole.header("Content-Disposition")?.hasPrefix("attachment; filename=\"clip.bin\"") == true)

                func expectRange(_ header: String, _ range: Range<Int>) async throws {
                    let reply = try await http.get(path, headers: user.auth.merging(["Range": header]) { _, n in n })
                    #expect(reply.status == 206, "\(header)")
                    #expect(reply.body == bytes.subdata(in: range), "\(header)")
                    #expect(reply.header("Content-Range") == "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(length)", "\(header)")
                    #expect(reply.header("Content-Length") == String(range.count), "\(header)")
                    #expect(reply.header("ETag") == etag)
                }
                try await expectRange("bytes=0-0", 0..<1)
                try await expectRange("bytes=0-99", 0..<100)
                let chunk = GatewayHarness.chunkSize
                try await expectRange("bytes=\(chunk - 10)-\(2 * chunk + 10)", (chunk - 10)..<(2 * chunk + 11))
                try await expectRange("bytes=\(length - 500)-", (length - 500)..<length)
                try await expectRange("bytes=-1000", (length - 1000)..<length)
                try await expectRange("bytes=-\(length * 2)", 0..<length)
                try await expectRange("bytes=\(length - 1)-\(length + 1000)", (length - 1)..<length)

                for unsatisfiable in ["bytes=\(length)-", "bytes=\(length + 5)-\(length + 10)", "bytes=-0"] {
                    let reply = try await http.get(path, headers: user.auth.merging(["Range": unsatisfiable]) { _, n in n })
                    #expect(reply.status == 416, "\(unsatisfiable)")
                    #expect(reply.header("Content-Range") == "bytes */\(length)")
                }
                // Not a single byte range: ignored, the whole document.
                for ignored in ["items=0-5", "bytes=0-1,5-6", "bytes=abc"] {
                    let reply = try await http.get(path, headers: user.auth.merging(["Range": ignored]) { _, n in n })
                    #expect(reply.status == 200 && reply.body.count == length, "\(ignored)")
                }
                // Conditional and HEAD.
                let cached = try await http.get(path, headers: user.auth.merging(["If-None-Match": etag]) { _, n in n })
                #expect(cached.status == 304 && cached.body.isEmpty)
                let stale = try await http.get(path, headers: user.auth.merging(["If-None-Match": "\"other\""]) { _, n in n })
                #expect(stale.status == 200)
                let head = try await http.send("HEAD", path, headers: user.auth)
                #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == String(length))
                let attachment = try await http.get(path + "?download", headers: user.auth)
                #expect(attachment.header("Content-Disposition")?.hasPrefix("attachment;") == true)
                // Still uploading: 409.
                let pending = try await harness.tusCreate(user, length: 10)
                let pendingId = pending.split(separator: "/").last!
                #expect(try await http.get("/api/documents/\(pendingId)/content", headers: user.auth).status == 409)
                #expect(try await http.get(path).status == 401)
            }
        }

        @Test(arguments: ByteStore.allCases) func tusProtocol(_ store: ByteStore) async throws {
            try await GatewayHarness.run(gateway: ["GATEWAY_TUS_MAX_SIZE": "1000000"], storage: store) { harness in
                let user = try await harness.user()
                let http = harness.http
                let options = try await http.send("OPTIONS", "/api/uploads")
                #expect(options.status == 204)
                #expect(options.header("Tus-Version") == "1.0.0" && options.header("Tus-Resumable") == "1.0.0")
                #expect(options.header("Tus-Extension") == "creation,expiration,termination")
                #expect(options.header("Tus-Max-Size") == "1000000")

                let metadata = GatewayHarness.metadata(["type": "transcript", "filename": "a.bin"])
                func create(_ headers: [String: String]) async throws -> HTTPReply {
                    try await http.send("POST", "/api/uploads", headers: user.tus.merging(headers) { _, n in n })
                }
                #expect(try await create(["Upload-Metadata": metadata]).status == 400)
                #expect(try await create(["Upload-Length": "-1", "Upload-Metadata": metadata]).status == 400)
                #expect(try await create(["Upload-Length": "10"]).status == 400)
                #expect(try await create(["Upload-Length": "10", "Upload-Metadata": "type !!!"]).status == 400)
                #expect(try await create(["Upload-Length": "2000000", "Upload-Metadata": metadata]).status == 413)
                let version = try await create(["Upload-Length": "10", "Upload-Metadata": metadata, "Tus-Resumable": "0.2.2"])
                #expect(version.status == 412 && version.header("Tus-Version") == "1.0.0")
                #expect(
                    try await http.send(
                        "POST", "/api/uploads", headers: ["Tus-Resumable": "1.0.0", "Upload-Length": "10", "Upload-Metadata": metadata]
                    ).status == 401)

                let bytes = GatewayHarness.randomBytes(700_000)
                let location = try await harness.tusCreate(user, length: bytes.count)
                let head = try await http.send("HEAD", location, headers: user.tus)
                #expect(head.status == 200 && head.header("Upload-Offset") == "0" && head.header("Upload-Length") == String(bytes.count))
                #expect(head.header("Cache-Control") == "no-store")
                #expect(head.header("Upload-Expires")?.hasSuffix("GMT") == true)

                let wrongType = try await http.send(
                    "PATCH", location, body: Data("x".utf8),
                    headers: user.tus.merging(["Upload-Offset": "0", "Content-Type": "application/octet-stream"]) { _, n in n })
                #expect(wrongType.status == 415)
                #expect(try await harness.tusPatch(user, location, offset: 5, bytes.subdata(in: 5..<10)).status == 409)
                let first = try await harness.tusPatch(user, location, offset: 0, bytes.subdata(in: 0..<400_000))
                #expect(first.status == 204 && first.header("Upload-Offset") == "400000")
                // A repeat of the same PATCH (a lost reply): 409 with nothing changed.
                let repeated = try await harness.tusPatch(user, location, offset: 0, bytes.subdata(in: 0..<400_000))
                #expect(repeated.status == 409)
                #expect(try await http.send("HEAD", location, headers: user.tus).header("Upload-Offset") == "400000")
                // An empty PATCH at the right offset just confirms it.
                #expect(try await harness.tusPatch(user, location, offset: 400_000, Data()).status == 204)
                #expect(try await harness.tusPatch(user, location, offset: 3, Data()).status == 409)
                // Past the declared length: refused, nothing kept.
                #expect(try await harness.tusPatch(user, location, offset: 400_000, GatewayHarness.randomBytes(300_001)).status == 400)
                let last = try await harness.tusPatch(user, location, offset: 400_000, bytes.subdata(in: 400_000..<bytes.count))
                #expect(last.status == 204 && last.header("Upload-Offset") == String(bytes.count))
                let id = location.split(separator: "/").last!
                let download = try await http.get("/api/documents/\(id)/content", headers: user.auth)
                #expect(download.body == bytes)

                // Termination.
                #expect(try await http.send("DELETE", location, headers: user.tus).status == 204)
                #expect(try await http.send("HEAD", location, headers: user.tus).status == 404)
                #expect(try await http.send("HEAD", "/api/uploads/not-an-id", headers: user.tus).status == 404)
            }
        }

        /// 64 MiB through tus and back, SHA-256 checked, with the gateway's peak memory growing by
        /// far less than the file (it streams chunk by chunk, never holding the body). What it
        /// measures is memory, not speed: each chunk's `documents.append` gets 30 s instead of the
        /// harness's 3 s, which a fresh clone's run at load 13 once exceeded writing to SeaweedFS (504).
        @Test(arguments: ByteStore.allCases) func largeUploadAndDownloadStayWithinBoundedMemory(_ store: ByteStore) async throws {
            try await GatewayHarness.run(
                gateway: ["GATEWAY_BUS_TIMEOUT": "30s"], documents: ["DOCUMENTS_MAX_FILE_SIZE": String(128 << 20)], storage: store
            ) { harness in
                let user = try await harness.user()
                let bytes = GatewayHarness.randomBytes(64 << 20)
                try harness.resetPeakMemory(of: "Gateway")
                let before = try harness.peakMemory(of: "Gateway")
                let id = try await harness.upload(bytes, as: user, type: "highlight_video", fileName: "game.bin", patchSize: 16 << 20)
                let download = try await harness.http.get("/api/documents/\(id)/content", headers: user.auth)
                #expect(download.status == 200)
                #expect(GatewayHarness.sha256(download.body) == GatewayHarness.sha256(bytes))
                let growth = try harness.peakMemory(of: "Gateway") - before
                print("gateway peak memory growth for a 64 MiB upload (16 MiB PATCHes) and download: \(growth >> 20) MiB")
                #expect(growth < 40 << 20, "the gateway's peak memory grew by \(growth >> 20) MiB")
            }
        }
    }
}
