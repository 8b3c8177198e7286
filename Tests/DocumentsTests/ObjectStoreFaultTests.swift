import Bus
import Contracts
import Foundation
import ObjectStorage
import Postgres
import TestSupport
import Testing

extension DocumentsSuites {
    /// The store going away under Documents: each test has a SeaweedFS of its own to stop.
    @Suite("Documents: S3 store outages (SeaweedFS stopped and started)")
    struct ObjectStoreFaultTests {
        @Test("the store stopped during a read: unavailable (never short bytes); started again, the same read succeeds")
        func readWhileStoreDown() async throws {
            let server = try await SeaweedFS.start()
            try await DocumentsHarness.run(storage: .s3, seaweed: server) { harness in
                let owner = UUID()
                let me = DocumentsHarness.user(owner)
                let bytes = Samples.pdf + Samples.bytes(3 * DocumentsHarness.chunkSize, seed: 9) + Data("%%EOF\n".utf8)
                let document = try await harness.store(owner: owner, bytes)
                await server.stop()
                let error = await #expect(throws: BusError.self) { try await harness.read(document.id, principal: me, offset: 0, length: 1 << 20) }
                #expect(error?.code == .unavailable)
                #expect(error?.message.contains("object storage") == true, "\(error?.message ?? "")")
                try await server.startProcess()
                let (reply, read) = try await harness.readOnceStoreIsBack(document.id, principal: me, offset: 1 << 20, length: 1 << 20)
                #expect(read == bytes.subdata(in: (1 << 20)..<(2 << 20)) && reply.etag == Samples.sha256(bytes))
            }
        }

        @Test(
            "the store stopped during an upload: appends are refused unavailable once a part is due, nothing acknowledged is lost, and after a restart the upload resumes and completes"
        )
        func uploadWhileStoreDown() async throws {
            let server = try await SeaweedFS.start()
            try await DocumentsHarness.run(storage: .s3, seaweed: server) { harness in
                let owner = UUID()
                let me = DocumentsHarness.user(owner)
                let chunk = DocumentsHarness.chunkSize
                var generated = Samples.bytes(3 * DocumentsHarness.partSize + 4321, seed: 11)
                generated.replaceSubrange(0..<Samples.mp4.count, with: Samples.mp4)
                let bytes = generated
                let created = try await harness.create(
                    owner: owner, type: .highlightVideo, title: "Film", fileType: "video/mp4", length: Int64(bytes.count))
                try await harness.upload(created.id, owner: owner, bytes.prefix(DocumentsHarness.partSize + 2 * chunk))
                await server.stop()
                // Chunks are acknowledged while they fit in staging; the one after a part that could not go is refused.
                var offset = DocumentsHarness.partSize + 2 * chunk
                var refused: BusError?
                while offset < bytes.count, refused == nil {
                    let end = min(offset + chunk, bytes.count)
                    do {
                        offset = Int(
                            try await harness.append(created.id, owner: owner, offset: Int64(offset), bytes.subdata(in: offset..<end)).offset)
                    } catch let error as BusError {
                        refused = error
                    }
                }
                #expect(refused?.code == .unavailable)
                let status = try await harness.client.call(DocumentsUploadStatus.self, .init(id: created.id), principal: me)
                #expect(status.offset == Int64(offset), "an acknowledged chunk was lost")
                try await server.startProcess()
                let done = try await harness.upload(created.id, owner: owner, bytes, from: Int(status.offset))
                #expect(done.complete && done.document?.sha256 == Samples.sha256(bytes))
                let (_, tail) = try await harness.read(created.id, principal: me, offset: Int64(bytes.count - 4321), length: 5000)
                #expect(tail == bytes.suffix(4321))
            }
        }

        @Test("deleting while the store is down queues the object; the queue keeps it through the outage and removes it once the store is back")
        func removalQueueSurvivesOutage() async throws {
            let server = try await SeaweedFS.start()
            try await DocumentsHarness.run(storage: .s3, seaweed: server) { harness in
                let owner = UUID()
                let me = DocumentsHarness.user(owner)
                let gone = try await harness.store(owner: owner, Samples.pdf)
                let kept = try await harness.store(owner: owner, Samples.png, type: .statsSheet, fileType: "image/png")
                #expect(try await harness.objectKeys().count == 2)
                await server.stop()
                _ = try await harness.client.call(DocumentsDelete.self, .init(id: gone.id), principal: me)
                // The sweeper tries every second and keeps the row, counting its failures.
                let deadline = ContinuousClock.now + .seconds(10)
                var attempts = 0
                while attempts < 2, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                    attempts = try await harness.database.pool.withConnection { db in
                        try db.query("SELECT coalesce(max(attempts), 0) FROM documents.object_removals")[0].decode(Int.self, column: 0)
                    }
                }
                #expect(attempts >= 2)
                #expect(try await harness.queuedObjectRemovals() == 1)
                try await server.startProcess()
                let key = "documents/\(owner.uuidString.lowercased())/\(gone.id.uuidString.lowercased())"
                try await harness.waitForObjects(prefix: key, count: 0)
                // The sweeper deletes the object, then its queue row: wait for the second step too.
                let drained = ContinuousClock.now + .seconds(10)
                while try await harness.queuedObjectRemovals() > 0, ContinuousClock.now < drained {
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(try await harness.queuedObjectRemovals() == 0)
                let (_, read) = try await harness.readOnceStoreIsBack(kept.id, principal: me, offset: 0, length: 1 << 20)
                #expect(read == Samples.png)
            }
        }

        @Test("account.deleted on S3: no object and no multipart upload of the user remains; the certificate's counts include them; others stay")
        func accountDeletionEmptiesThePrefix() async throws {
            try await TestDatabase.withDatabase { database in
                let documentsRPC = ipcEndpoint()
                try await AccountsPeers.run(database, documentsRPC: documentsRPC) { accounts in
                    try await DocumentsHarness.run(
                        storage: .s3, accounts: (accounts.accountsRPC, accounts.accountsEvents), database: database, rpc: documentsRPC
                    ) { harness in
                        let alice = try await accounts.signUp()
                        let bob = try await accounts.signUp()
                        for owner in [alice, bob] {
                            _ = try await harness.store(owner: owner, Samples.pdf)
                            _ = try await harness.store(owner: owner, Samples.png, type: .statsSheet, fileType: "image/png")
                        }
                        // One of alice's uploads is unfinished with a part in S3 (an open multipart upload).
                        let unfinished = try await harness.create(owner: alice, fileType: nil, length: 20 << 20)
                        try await harness.upload(unfinished.id, owner: alice, Samples.bytes(DocumentsHarness.partSize + (1 << 20), seed: 4))
                        #expect(try await harness.multipartUploads() == 1)
                        let alicePrefix = "documents/\(alice.uuidString.lowercased())/"
                        #expect(try await harness.objectKeys(prefix: alicePrefix).count == 2)

                        try await accounts.delete(alice)
                        try await harness.waitUntilEmpty(alice)
                        try await harness.waitForObjects(prefix: alicePrefix, count: 0)
                        let deadline = ContinuousClock.now + .seconds(10)
                        while try await harness.multipartUploads() > 0, ContinuousClock.now < deadline {
                            try await Task.sleep(for: .milliseconds(100))
                        }
                        #expect(try await harness.multipartUploads() == 0)
                        #expect(try await harness.objectKeys(prefix: "documents/\(bob.uuidString.lowercased())/").count == 2)
                        let (count, bytes) = try await database.pool.withConnection { db in
                            try db.query("SELECT documents, bytes FROM documents.account_cleanups WHERE user_id = $1", alice)[0]
                                .decode(Int.self, Int64.self)
                        }
                        #expect(count == 3)
                        #expect(bytes == Int64(Samples.pdf.count + Samples.png.count + DocumentsHarness.partSize + (1 << 20)))
                    }
                }
            }
        }
    }
}

extension DocumentsHarness {
    /// A read just after the store restarted: SeaweedFS answers S3 before its volume server has
    /// registered again (GetObject is then `InternalError`, which Documents reports `unavailable`),
    /// so `unavailable` is retried for up to 30 s; any other answer is returned or thrown at once.
    func readOnceStoreIsBack(_ id: UUID, principal: Principal, offset: Int64, length: Int) async throws -> (DocumentsRead.Reply, Data) {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                return try await read(id, principal: principal, offset: offset, length: length)
            } catch let error as BusError where error.code == .unavailable && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }
}
