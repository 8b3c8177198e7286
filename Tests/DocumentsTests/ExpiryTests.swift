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
            try await DocumentsHarness.run(storage: storage, settings: ["DOCUMENTS_UPLOAD_EXPIRY": "2s", "DOCUMENTS_UPLOAD_SWEEP_INTERVAL": "200ms"])
            { harness in
                let owner = UUID()
                let me = DocumentsHarness.user(owner)
                let complete = try await harness.store(owner: owner, Samples.pdf)
                let abandoned = try await harness.create(owner: owner, fileType: nil, length: DocumentsHarness.maxFileSize)
                // Six chunks: on S3 the first five make a part, so a multipart upload is open when it is swept.
                let chunk = DocumentsHarness.chunkSize
                var first = try await harness.append(abandoned.id, owner: owner, offset: 0, Samples.bytes(chunk, seed: 1))
                for index in 1..<6 {
                    first = try await harness.append(abandoned.id, owner: owner, offset: Int64(index * chunk), Samples.bytes(chunk, seed: 1))
                }
                // tus Upload-Expires: the last chunk's time plus the expiry (2 s here).
                let expiresIn = try #require(first.expiresAt).timeIntervalSinceNow
                #expect(expiresIn > 0.5 && expiresIn <= 2.1)
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
                    // The sweep queued its multipart upload; the removal sweeper aborts it.
                    let deadline = ContinuousClock.now + .seconds(10)
                    while try await harness.multipartUploads() > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
                    #expect(try await harness.multipartUploads() == 0, "the abandoned multipart upload was not aborted")
                    #expect(try await harness.queuedObjectRemovals() == 0)
                }
                #expect(try await harness.get(.init(id: complete.id), as: owner) == complete)
                #expect(try await harness.client.call(DocumentsUploadStatus.self, .init(id: active.id), principal: me).offset == offset)
                _ = try await harness.create(owner: owner, length: 200 << 20)
            }
        }
    }
}
