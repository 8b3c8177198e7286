import Bus
import Contracts
import Foundation
import Locks
import TestSupport
import Testing

extension DocumentsSuites {
    @Suite("Documents: resumable uploads")
    struct ResumeTests {
        @Test(
            "killed mid-upload and restarted, the upload resumes from the committed offset and nothing acknowledged is lost",
            arguments: Storage.allCases)
        func resumeAfterKill(storage: Storage) async throws {
            try await DocumentsHarness.run(storage: storage) { harness in
                let owner = UUID()
                let chunk = DocumentsHarness.chunkSize
                var generated = Samples.bytes(24 * chunk + 777, seed: 7)
                generated.replaceSubrange(0..<Samples.mp4.count, with: Samples.mp4)
                let bytes = generated
                let created = try await harness.create(
                    owner: owner, type: .highlightVideo, title: "Game film", fileType: "video/mp4", length: Int64(bytes.count))

                // Upload in the background and kill the service while chunks are in flight.
                let acknowledged = Acknowledged()
                let uploader = Task {
                    var offset = 0
                    while offset < bytes.count {
                        let end = min(offset + chunk, bytes.count)
                        let status = try await harness.append(created.id, owner: owner, offset: Int64(offset), bytes.subdata(in: offset..<end))
                        acknowledged.set(status.offset)
                        offset = end
                    }
                }
                while acknowledged.value < Int64(6 * chunk) { try await Task.sleep(for: .milliseconds(5)) }
                await harness.kill()
                // The chunk in flight gets no reply: stop waiting for it.
                uploader.cancel()
                _ = await uploader.result
                let before = acknowledged.value
                #expect(before < Int64(bytes.count))

                try await harness.start()
                let status = try await harness.client.call(DocumentsUploadStatus.self, .init(id: created.id), principal: DocumentsHarness.user(owner))
                #expect(status.offset >= before, "an acknowledged chunk was lost")
                #expect(status.offset % Int64(chunk) == 0, "a chunk was half committed")
                #expect(!status.complete)
                // Resuming recomputes the running SHA-256 from the stored bytes (the restart lost it).
                let done = try await harness.upload(created.id, owner: owner, bytes, from: Int(status.offset))
                #expect(done.complete)
                #expect(done.document?.sha256 == Samples.sha256(bytes))
                let (_, tail) = try await harness.read(
                    created.id, principal: DocumentsHarness.user(owner), offset: Int64(bytes.count - 777), length: 1000)
                #expect(tail == bytes.suffix(777))
            }
        }
    }
}

/// The highest offset the server acknowledged, shared between the uploading task and the test.
final class Acknowledged: Sendable {
    private let offset = LockedValue<Int64>(0)
    var value: Int64 { offset.withLock { $0 } }
    func set(_ value: Int64) { offset.withLock { $0 = max($0, value) } }
}
