import Bus
import Contracts
import Foundation
import ObjectStorage
import Postgres
import TestSupport
import Testing

extension DocumentsSuites {
    /// What only S3 storage has: multipart parts, its own keys, the orphan sweep, a store that
    /// answers badly at start.
    @Suite("Documents: bytes in S3 (SeaweedFS)")
    struct ObjectStoreUploadTests {
        @Test("a file of three parts uploads as one multipart upload: SHA-256, ranged reads across part boundaries, one object, no staging left")
        func multipartUpload() async throws {
            try await DocumentsHarness.run(storage: .s3) { harness in
                let owner = UUID()
                let part = DocumentsHarness.partSize
                var generated = Samples.bytes(2 * part + 3 * DocumentsHarness.chunkSize + 333, seed: 33)
                generated.replaceSubrange(0..<Samples.mp4.count, with: Samples.mp4)
                let bytes = generated
                let created = try await harness.create(
                    owner: owner, type: .highlightVideo, title: "Film", fileType: "video/mp4", length: Int64(bytes.count))
                // Halfway: the first part is in S3, the rest staged in PostgreSQL; nothing is an object yet.
                try await harness.upload(created.id, owner: owner, bytes.prefix(part + DocumentsHarness.chunkSize))
                #expect(try await harness.multipartUploads() == 1)
                #expect(try await harness.objectKeys().isEmpty)
                let document = try #require(
                    try await harness.upload(created.id, owner: owner, bytes, from: part + DocumentsHarness.chunkSize).document)
                #expect(document.sha256 == Samples.sha256(bytes))
                let key = "documents/\(owner.uuidString.lowercased())/\(created.id.uuidString.lowercased())"
                #expect(try await harness.objectKeys() == [key])
                #expect(try await harness.bucketClient().headObject(key: key)?.size == Int64(bytes.count))
                #expect(try await harness.multipartUploads() == 0)
                let leftovers = try await harness.database.pool.withConnection { db in
                    try db.query(
                        "SELECT (SELECT count(*) FROM documents.upload_staged_chunks) + (SELECT count(*) FROM documents.upload_parts)"
                    )[0].decode(Int.self, column: 0)
                }
                #expect(leftovers == 0)
                let me = DocumentsHarness.user(owner)
                for (offset, length) in [(0, 100), (part - 10, 20), (2 * part - 1, 2), (bytes.count - 333, 1000), (bytes.count, 10)] {
                    let (reply, read) = try await harness.read(created.id, principal: me, offset: Int64(offset), length: length)
                    #expect(read == bytes.subdata(in: offset..<min(offset + length, bytes.count)), "range at \(offset)")
                    #expect(reply.etag == Samples.sha256(bytes) && reply.totalLength == Int64(bytes.count))
                }
                // Deleted: the object goes through the removal queue.
                _ = try await harness.client.call(DocumentsDelete.self, .init(id: created.id), principal: me)
                try await harness.waitForObjects(prefix: key, count: 0)
            }
        }

        @Test("a crash after CompleteMultipartUpload but before the row's commit: the last chunk sent again finds the object and completes the row")
        func completedBeforeCommit() async throws {
            try await DocumentsHarness.run(storage: .s3) { harness in
                let owner = UUID()
                let chunk = DocumentsHarness.chunkSize
                let bytes = Samples.bytes(DocumentsHarness.partSize + 2 * chunk + 99, seed: 44)
                let created = try await harness.create(owner: owner, fileType: nil, length: Int64(bytes.count))
                let lastStart = bytes.count - 99
                try await harness.upload(created.id, owner: owner, bytes.prefix(lastStart))
                // Do what Documents does with the last chunk up to the commit, as if it then died.
                let (key, uploadId, parts, staged) = try await harness.database.pool.withConnection { db in
                    let (key, uploadId) = try db.query(
                        "SELECT object_key, multipart_upload_id FROM documents.documents WHERE id = $1", created.id)[0].decode(
                            String.self, String.self)
                    let parts = try db.query(
                        "SELECT part_number, etag FROM documents.upload_parts WHERE document_id = $1 ORDER BY 1", created.id
                    ).map { row in
                        let (number, etag) = try row.decode(Int.self, String.self)
                        return S3CompletedPart(partNumber: number, etag: etag)
                    }
                    let staged = try db.query(
                        "SELECT bytes FROM documents.upload_staged_chunks WHERE document_id = $1 ORDER BY start_offset", created.id
                    ).reduce(into: [UInt8]()) { $0 += try $1.decode([UInt8].self, column: 0) }
                    return (key, uploadId, parts, staged)
                }
                #expect(parts.count == 1)
                let bucket = try harness.bucketClient()
                let last = staged + Array(bytes.suffix(99))
                let etag = try await bucket.uploadPart(key: key, uploadId: uploadId, partNumber: 2, bytes: last)
                try await bucket.completeMultipartUpload(key: key, uploadId: uploadId, parts: parts + [S3CompletedPart(partNumber: 2, etag: etag)])
                // A different last chunk does not match the object: refused, the row stays unfinished.
                var wrong = bytes.suffix(99)
                wrong[wrong.startIndex] ^= 0xFF
                await #expect(throws: BusError.self) { try await harness.append(created.id, owner: owner, offset: Int64(lastStart), Data(wrong)) }
                let done = try await harness.append(created.id, owner: owner, offset: Int64(lastStart), bytes.suffix(99))
                #expect(done.complete && done.document?.sha256 == Samples.sha256(bytes))
                let (_, read) = try await harness.read(
                    created.id, principal: DocumentsHarness.user(owner), offset: Int64(lastStart - 10), length: 200)
                #expect(read == bytes.suffix(109))
            }
        }

        @Test("objects no row points to, and multipart uploads no row records, are removed after the grace; documents' objects stay")
        func orphanSweep() async throws {
            try await DocumentsHarness.run(
                storage: .s3, settings: ["DOCUMENTS_S3_ORPHAN_GRACE": "2s", "DOCUMENTS_S3_ORPHAN_SWEEP_INTERVAL": "500ms"]
            ) { harness in
                let owner = UUID()
                let kept = try await harness.store(owner: owner, Samples.pdf)
                let bucket = try harness.bucketClient()
                // What a crash between S3 and the database leaves: an object and an upload no row knows.
                let orphan = "documents/\(owner.uuidString.lowercased())/\(UUID().uuidString.lowercased())"
                try await bucket.putObject(key: orphan, bytes: Array(Samples.pdf))
                let upload = try await bucket.createMultipartUpload(key: orphan + "-upload")
                #expect(try await harness.objectKeys().count == 2)
                #expect(try await harness.multipartUploads() == 1)
                try await harness.waitForObjects(prefix: orphan, count: 0, within: .seconds(15))
                let deadline = ContinuousClock.now + .seconds(10)
                while try await harness.multipartUploads() > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(200)) }
                #expect(try await harness.multipartUploads() == 0, "upload \(upload) was not aborted")
                let (_, read) = try await harness.read(kept.id, principal: DocumentsHarness.user(owner), offset: 0, length: 1 << 20)
                #expect(read == Samples.pdf)
            }
        }

        @Test("bad credentials, a missing bucket or an unreachable store stop Documents at start with a clear message, never the secret")
        func badSettingsFailAtStart() async throws {
            let server = try await SharedSeaweedFS.get()
            try await TestDatabase.withDatabase { database in
                var base = ServiceEnvironment.make(databaseURL: database.url, rpc: ipcEndpoint(), logLevel: "error")
                base["ACCOUNTS_RPC_ENDPOINTS"] = ipcEndpoint()
                base["ACCOUNTS_EVENTS_ENDPOINTS"] = ipcEndpoint()
                let bucket = "docs-" + UUID().uuidString.lowercased().prefix(18)
                try await server.makeBucket(bucket)
                let good = DocumentsHarness.s3Environment(server, bucket: bucket)
                let wrongSecret = "wrong-\(UUID().uuidString)"
                let cases: [(String, [String: String], String)] = [
                    ("bad secret", ["DOCUMENTS_S3_SECRET_ACCESS_KEY": wrongSecret], "badCredentials"),
                    ("missing bucket", ["DOCUMENTS_S3_BUCKET": "no-such-bucket-\(UInt32.random(in: 0...UInt32.max))"], "noSuchBucket"),
                    ("unreachable", ["DOCUMENTS_S3_ENDPOINT": "http://127.0.0.1:1"], "unreachable"),
                    ("no endpoint", ["DOCUMENTS_S3_ENDPOINT": ""], "DOCUMENTS_S3_ENDPOINT is not set"),
                ]
                for (name, change, expected) in cases {
                    let environment = base.merging(good) { _, s3 in s3 }.merging(change) { _, changed in changed }
                    let error = await #expect(throws: PeerProcessError.self, "\(name)") {
                        _ = try await PeerProcess("Documents", environment: environment, timeout: .seconds(20))
                    }
                    guard case .notReady(_, let output) = error else { continue }
                    #expect(output.contains(expected), "\(name): \(output)")
                    #expect(!output.contains(wrongSecret) && !output.contains(server.secretAccessKey), "\(name) logged the secret")
                }
            }
        }
    }
}

extension DocumentsHarness {
    /// Waits until exactly `count` keys under `prefix` are in this run's bucket.
    func waitForObjects(prefix: String, count: Int, within timeout: Duration = .seconds(20)) async throws {
        let end = ContinuousClock.now + timeout
        var last = -1
        while ContinuousClock.now < end {
            last = try await objectKeys(prefix: prefix).count
            if last == count { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestSupportError("\(last) objects under \(prefix), not \(count), after \(timeout)")
    }
}
