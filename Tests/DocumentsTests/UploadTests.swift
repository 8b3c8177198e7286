import Bus
import Contracts
import Crypto
import Foundation
import TestSupport
import Testing

extension DocumentsSuites {
    @Suite("Documents: upload and download", .serialized)
    struct UploadTests {
        @Test("a small file round-trips with its SHA-256, and the reply carries the seed's derived flags", arguments: Storage.allCases)
        func smallRoundTrip(storage: Storage) async throws {
            try await DocumentsHarness.run(storage: storage) { harness in
                let owner = UUID()
                let bytes = Samples.pdf + Samples.bytes(3000, seed: 1) + Data("\n%%EOF\n".utf8)
                let document = try await harness.store(owner: owner, bytes)
                #expect(document.bytesState == .available)
                #expect(document.sha256 == Samples.sha256(bytes))
                #expect(document.committedBytes == Int64(bytes.count))
                #expect(document.isPDF && document.canPreview && !document.isVideo && !document.isImage)
                #expect(!document.possiblyCorrupt)
                #expect(document.fileUrl == "documents/\(document.id.uuidString.lowercased())/transcript.pdf")
                let (reply, read) = try await harness.read(document.id, principal: DocumentsHarness.user(owner), offset: 0, length: 1 << 20)
                #expect(read == bytes)
                #expect(reply.totalLength == Int64(bytes.count))
                #expect(reply.etag == Samples.sha256(bytes))
            }
        }

        @Test("a 256 MB file streams up and back in 1 MiB chunks with matching SHA-256", arguments: Storage.allCases)
        func largeRoundTrip(storage: Storage) async throws {
            try await DocumentsHarness.run(storage: storage) { harness in
                let owner = UUID()
                let chunk = DocumentsHarness.chunkSize
                let chunks = 256
                let length = Int64(chunks * chunk)
                let created = try await harness.create(
                    owner: owner, type: .highlightVideo, title: "Highlights", fileType: "video/mp4", length: length)
                #expect(created.isVideo && created.bytesState == .uploading)
                var sent = Crypto.SHA256()
                var status: UploadStatus?
                for index in 0..<chunks {
                    // Made one chunk at a time: the test never holds the file either.
                    var piece = Samples.bytes(chunk, seed: UInt64(index) + 1000)
                    if index == 0 { piece.replaceSubrange(0..<Samples.mp4.count, with: Samples.mp4) }
                    sent.update(data: piece)
                    status = try await harness.append(created.id, owner: owner, offset: Int64(index * chunk), piece)
                }
                let expected = sent.finalize().map { String(format: "%02x", $0) }.joined()
                #expect(status?.complete == true)
                #expect(status?.document?.sha256 == expected)
                var received = Crypto.SHA256()
                var offset: Int64 = 0
                while offset < length {
                    let (reply, bytes) = try await harness.read(created.id, principal: DocumentsHarness.user(owner), offset: offset, length: chunk)
                    #expect(reply.totalLength == length)
                    received.update(data: bytes)
                    offset += Int64(bytes.count)
                    if bytes.isEmpty { break }
                }
                #expect(offset == length)
                #expect(received.finalize().map { String(format: "%02x", $0) }.joined() == expected)
            }
        }

        @Test("an append at the wrong offset is a conflict carrying the committed offset, and changes nothing", arguments: Storage.allCases)
        func offsetConflict(storage: Storage) async throws {
            try await DocumentsHarness.run(storage: storage) { harness in
                let owner = UUID()
                let bytes = Samples.bytes(5000, seed: 2)
                let created = try await harness.create(owner: owner, fileType: "application/octet-stream", fileName: nil, length: 5000)
                _ = try await harness.append(created.id, owner: owner, offset: 0, bytes.subdata(in: 0..<2000))
                for wrong: Int64 in [0, 1000, 2001, 4000] {
                    let error = await #expect(throws: BusError.self) {
                        try await harness.append(created.id, owner: owner, offset: wrong, bytes.subdata(in: 2000..<3000))
                    }
                    #expect(error?.code == .conflict)
                    #expect(error?.details?["offset"] == "2000")
                }
                let overrun = await #expect(throws: BusError.self) {
                    try await harness.append(created.id, owner: owner, offset: 2000, Samples.bytes(3001, seed: 3))
                }
                #expect(overrun?.code == .invalidArgument)
                let status = try await harness.upload(created.id, owner: owner, bytes, from: 2000)
                #expect(status.document?.sha256 == Samples.sha256(bytes))
                #expect(status.document?.canPreview == false)
                #expect(status.complete && status.expiresAt == nil)
                let again = await #expect(throws: BusError.self) {
                    try await harness.append(created.id, owner: owner, offset: 5000, Data([1]))
                }
                #expect(again?.code == .conflict)
            }
        }

        @Test("concurrent appends at the same offset: exactly one commits, the others are told the new offset", arguments: Storage.allCases)
        func racingAppends(storage: Storage) async throws {
            try await DocumentsHarness.run(storage: storage) { harness in
                let owner = UUID()
                let bytes = Samples.bytes(3000, seed: 12)
                let created = try await harness.create(owner: owner, fileType: nil, length: 3000)
                let first = bytes.subdata(in: 0..<1000)
                let outcomes = Outcomes()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            do {
                                _ = try await harness.append(created.id, owner: owner, offset: 0, first)
                                outcomes.codes.withLock { $0.append(nil) }
                            } catch let error as BusError {
                                #expect(error.details?["offset"] == "1000")
                                outcomes.codes.withLock { $0.append(error.code) }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let codes = outcomes.codes.withLock { $0 }
                #expect(codes.filter { $0 == nil }.count == 1)
                #expect(codes.filter { $0 == .conflict }.count == 7)
                let done = try await harness.upload(created.id, owner: owner, bytes, from: 1000)
                #expect(done.document?.sha256 == Samples.sha256(bytes))
            }
        }

        @Test("sizes: beyond the maximum file size or the quota is payload_too_large, a chunk over the limit too", arguments: Storage.allCases)
        func limits(storage: Storage) async throws {
            try await DocumentsHarness.run(storage: storage) { harness in
                let owner = UUID()
                let tooBig = await #expect(throws: BusError.self) {
                    try await harness.create(owner: owner, length: DocumentsHarness.maxFileSize + 1)
                }
                #expect(tooBig?.code == .payloadTooLarge)
                // Declared lengths count against the quota (700 MiB): two 300 MiB uploads fit, a third does not.
                _ = try await harness.create(owner: owner, length: DocumentsHarness.maxFileSize)
                _ = try await harness.create(owner: owner, length: DocumentsHarness.maxFileSize)
                let overQuota = await #expect(throws: BusError.self) {
                    try await harness.create(owner: owner, length: DocumentsHarness.maxFileSize)
                }
                #expect(overQuota?.code == .payloadTooLarge)
                // Another user has a quota of their own.
                _ = try await harness.create(owner: UUID(), length: DocumentsHarness.maxFileSize)
                let small = try await harness.create(owner: UUID(), fileType: nil, length: Int64(DocumentsHarness.chunkSize + 10))
                let bigChunk = await #expect(throws: BusError.self) {
                    try await harness.append(small.id, owner: small.ownerId, offset: 0, Data(count: DocumentsHarness.chunkSize + 1))
                }
                #expect(bigChunk?.code == .payloadTooLarge)
                let noChunk = await #expect(throws: BusError.self) {
                    try await harness.client.call(
                        DocumentsAppend.self, .init(id: small.id, offset: 0), principal: DocumentsHarness.user(small.ownerId))
                }
                #expect(noChunk?.code == .invalidArgument)
            }
        }

        @Test("a zero-length file of an unchecked type is complete at once", arguments: Storage.allCases)
        func emptyFile(storage: Storage) async throws {
            try await DocumentsHarness.run(storage: storage) { harness in
                let document = try await harness.create(owner: UUID(), fileType: "text/plain", length: 0)
                #expect(document.bytesState == .available)
                #expect(document.sha256 == Samples.sha256(Data()))
                #expect(document.canPreview == false)
            }
        }
    }
}
