import Bus
import Contracts
import Foundation
import TestSupport
import Testing

extension DocumentsSuites {
    @Suite("Documents: abandoned uploads")
    struct ExpiryTests {
        @Test("an upload idle beyond DOCUMENTS_UPLOAD_EXPIRY is deleted with its bytes and frees its quota; complete and active ones stay")
        func abandonedUploadsExpire() async throws {
            try await DocumentsHarness.run(settings: ["DOCUMENTS_UPLOAD_EXPIRY": "2s", "DOCUMENTS_UPLOAD_SWEEP_INTERVAL": "200ms"]) { harness in
                let owner = UUID()
                let me = DocumentsHarness.user(owner)
                let complete = try await harness.store(owner: owner, Samples.pdf)
                let abandoned = try await harness.create(owner: owner, fileType: nil, length: DocumentsHarness.maxFileSize)
                let first = try await harness.append(abandoned.id, owner: owner, offset: 0, Samples.bytes(1000, seed: 1))
                // tus Upload-Expires: the last chunk's time plus the expiry (2 s here).
                let expiresIn = try #require(first.expiresAt).timeIntervalSinceNow
                #expect(expiresIn > 0.5 && expiresIn <= 2.1)
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
                #expect(try await harness.largeObjects() == objects - 1)
                #expect(try await harness.get(.init(id: complete.id), as: owner) == complete)
                #expect(try await harness.client.call(DocumentsUploadStatus.self, .init(id: active.id), principal: me).offset == offset)
                _ = try await harness.create(owner: owner, length: 200 << 20)
            }
        }
    }
}
