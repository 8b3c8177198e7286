import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension GatewayIntegration {
    /// SeaweedFS going away under downloads through the gateway (Documents on S3, a SeaweedFS of
    /// this test's own so stopping it disturbs no other suite): a download that starts while the
    /// store is down is a 503 the client can read, never a 200 with a short body; one whose store
    /// dies after the status line went out is cut short of its `Content-Length`, never ended as if
    /// complete; and after the store is back the same downloads succeed byte for byte.
    @Suite(.serialized) struct StoreOutageTests {
        @Test func downloadsWhileTheStoreIsDownAre503sAndCutMidStream() async throws {
            let seaweed = try await SeaweedFS.start()
            try await GatewayHarness.run(documents: ["DOCUMENTS_MAX_FILE_SIZE": String(64 << 20)], storage: .s3, seaweed: seaweed) {
                harness in
                let user = try await harness.user()
                // 24 MiB: 96 of the gateway's chunks and five S3 parts, far more than the socket
                // buffers between the gateway and a client that stops reading.
                let bytes = GatewayHarness.randomBytes(24 << 20)
                let id = try await harness.upload(bytes, as: user, patchSize: 8 << 20)
                let path = "/api/documents/\(id)/content"
                let range = user.auth.merging(["Range": "bytes=1000-1999"]) { _, new in new }
                let storagePath = "/storage/v1/object/" + GatewayHarness.storedFileUrl(try await fileUrl(harness, id, user))
                let storageKeys = user.auth.merging(["apikey": user.token]) { _, new in new }

                // Down before the download starts: 503 with a readable body and Retry-After.
                seaweed.kill()
                for (name, headers) in [("whole", user.auth), ("range", range)] {
                    let reply = try await harness.http.get(path, headers: headers)
                    #expect(reply.status == 503, "\(name): \(reply.status) \(reply.text.prefix(200))")
                    #expect(reply.header("Retry-After") != nil, "\(name)")
                    #expect(reply.json["error"] as? String == "unavailable", "\(name): \(reply.text.prefix(200))")
                    #expect(!(reply.json["message"] as? String ?? "").isEmpty, "\(name)")
                }
                let stored = try await harness.http.get(storagePath, headers: storageKeys)
                #expect(stored.status == 503, "\(stored.status) \(stored.text.prefix(200))")
                #expect(stored.json["statusCode"] as? String == "503", "\(stored.text.prefix(200))")

                // Back: the same downloads succeed. S3 answers before the volume server has reported
                // to the master, and reads fail until it has (a 503 in CI): retried as a client that
                // honours Retry-After would, as the Documents and S3 fault tests do.
                try await seaweed.startProcess()
                let whole = try await getOnceStoreIsBack(harness, path, headers: user.auth)
                #expect(whole.status == 200 && whole.body == bytes)
                let ranged = try await harness.http.get(path, headers: range)
                #expect(ranged.status == 206 && ranged.body == bytes.subdata(in: 1000..<2000))

                // Dies mid-stream: the status line and the first bytes are out, the client stops
                // reading (back-pressure holds the gateway a few chunks ahead), the store is killed.
                let connection = try await RawHTTPConnection.get(port: harness.httpPort, path: path, headers: user.auth)
                let head = try await connection.readHead()
                #expect(head.status == 200 && head.contentLength == bytes.count, "\(head.status) \(head.headers)")
                seaweed.kill()
                let rest = try await connection.readToEnd()
                let received = head.bodyBytes + rest.bytes
                print("store killed mid-download: \(received) of \(bytes.count) bytes arrived, then the connection \(rest.ending)")
                #expect(rest.ending != .timedOut, "the gateway neither finished nor cut the connection")
                #expect(received < bytes.count, "the whole body arrived: the store was killed too late to test anything")

                // Back again: the whole download succeeds.
                try await seaweed.startProcess()
                let again = try await getOnceStoreIsBack(harness, path, headers: user.auth)
                #expect(again.status == 200 && again.body == bytes)
            }
            await seaweed.stop()
        }

        /// A GET retried while it answers 503 (for up to 30 s), as a client honouring `Retry-After` would.
        private func getOnceStoreIsBack(_ harness: GatewayHarness, _ path: String, headers: [String: String]) async throws
            -> HTTPReply
        {
            let deadline = ContinuousClock.now + .seconds(30)
            while true {
                let reply = try await harness.http.get(path, headers: headers)
                guard reply.status == 503, ContinuousClock.now < deadline else { return reply }
                try await Task.sleep(for: .milliseconds(200))
            }
        }

        /// The `fileUrl` the native API answers for a document.
        private func fileUrl(_ harness: GatewayHarness, _ id: String, _ user: GatewayHarness.User) async throws -> String {
            let reply = try await harness.http.get("/api/documents/\(id)", headers: user.auth)
            guard reply.status == 200, let url = reply.json["fileUrl"] as? String else {
                throw TestSupportError("document read answered \(reply.status): \(reply.text.prefix(300))")
            }
            return url
        }
    }
}
