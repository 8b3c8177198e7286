import Bus
import Contracts
import Foundation
import TestSupport
import Testing

extension DocumentsSuites {
    @Suite("Documents: abandoned uploads")
    struct ExpiryTests {
        @Test(
            "an upload idle beyond DOCUMENTS_UPLOAD_EXPIRY is deleted with its bytes and frees its quota; complete and active ones stay",
            arguments: Storage.allCases)
        func abandonedUploadsExpire(storage: Storage) async throws {
            // 4 s of idleness expires an upload: the active one below is written every 0.5 s, so only a
            // pause of 4 s in this test (a machine stalled that long) could expire it too.
            try await DocumentsHarness.run(storage: storage, settings: ["DOCUMENTS_UPLOAD_EXPIRY": "4s", "DOCUMENTS_UPLOAD_SWEEP_INTERVAL": "200ms"])
            { harness in
                let owner = UUID()
                let me = DocumentsHarness.user(owner)
                let complete = try await harness.store(owner: owner, Samples.pdf)
                let abandoned = try await harness.create(owner: owner, fileType: nil, length: DocumentsHarness.maxFileSize)
                // Six chunks: on S3 the first five make a part, so a multipart upload is open when it is swept.
                let chunk = DocumentsHarness.chunkSize
                for index in 0..<5 {
                    _ = try await harness.append(abandoned.id, owner: owner, offset: Int64(index * chunk), Samples.bytes(chunk, seed: 1))
                }
                // tus Upload-Expires: the last chunk's time plus the expiry (4 s here), the chunk's
                // time being between the call's sending and its answer (to the millisecond stored).
                let sent = Date()
                let last = try await harness.append(abandoned.id, owner: owner, offset: Int64(5 * chunk), Samples.bytes(chunk, seed: 1))
                let answered = Date()
                let expiresAt = try #require(last.expiresAt)
                #expect(expiresAt >= sent.addingTimeInterval(4 - 0.001) && expiresAt <= answered.addingTimeInterval(4 + 0.001), "\(expiresAt)")
                let openUploads = try await harness.multipartUploads()
                #expect(openUploads == (storage == .s3 ? 1 : 0))
                let active = try await harness.create(owner: owner, fileType: nil, length: DocumentsHarness.maxFileSize)
                let objects = try await harness.largeObjects()
                // The quota (700 MiB) is full of the two 300 MiB reservations plus the PDF.
                let full = await #expect(throws: BusError.self) { try await harness.create(owner: owner, length: 200 << 20) }
                #expect(full?.code == .payloadTooLarge)

                // Keep one upload active with a chunk every 500 ms while the other sits idle.
                let end = ContinuousClock.now + .seconds(20)
                var offset: Int64 = 0
                var gone = false
                while !gone && ContinuousClock.now < end {
                    offset = try await harness.append(active.id, owner: owner, offset: offset, Samples.bytes(100, seed: UInt64(offset))).offset
                    try await Task.sleep(for: .milliseconds(500))
                    do {
                        _ = try await harness.client.call(DocumentsUploadStatus.self, .init(id: abandoned.id), principal: me)
                    } catch let error as BusError where error.code == .notFound {
                        gone = true
                    }
                }
                #expect(gone, "the abandoned upload was not swept within 20 s")
                #expect(try await harness.largeObjects() == objects - (storage == .postgres ? 1 : 0))
                if storage == .s3 {
                    // The sweep queued its multipart upload; the removal sweeper aborts it, then takes
                    // it off its queue (two steps: the first can be seen done before the second).
                    // Waited for, up to 60 s: a bound only against a sweeper that never gets there.
                    let deadline = ContinuousClock.now + .seconds(60)
                    func removed() async throws -> Bool {
                        let open = try await harness.multipartUploads()
                        let queued = try await harness.queuedObjectRemovals()
                        return open == 0 && queued == 0
                    }
                    while try await !removed(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
                    #expect(try await harness.multipartUploads() == 0, "the abandoned multipart upload was not aborted")
                    #expect(try await harness.queuedObjectRemovals() == 0, "the aborted upload is still queued for removal")
                }
                #expect(try await harness.get(.init(id: complete.id), as: owner) == complete)
                #expect(try await harness.client.call(DocumentsUploadStatus.self, .init(id: active.id), principal: me).offset == offset)
                _ = try await harness.create(owner: owner, length: 200 << 20)
            }
        }
    }
}
