import Bus
import Contracts
import Foundation
import TestSupport
import Testing

extension DocumentsSuites {
    @Suite("Documents: ranges and file types")
    struct RangeAndTypeTests {
        @Test("ranges at the start, middle and end, and past the end", arguments: Storage.allCases)
        func ranges(storage: Storage) async throws {
            try await DocumentsHarness.run(storage: storage) { harness in
                let owner = UUID()
                var bytes = Samples.bytes(3 * DocumentsHarness.chunkSize + 12_345, seed: 11)
                bytes.replaceSubrange(0..<Samples.png.count, with: Samples.png)
                let document = try await harness.store(owner: owner, bytes, type: .statsSheet, title: "Stats", fileType: "image/png")
                #expect(document.isImage && document.canPreview)
                let me = DocumentsHarness.user(owner)
                let total = bytes.count
                for (offset, length) in [(0, 100), (0, 1), (total / 2 - 3, 65_536), (1_500_000, DocumentsHarness.chunkSize), (total - 10, 10)] {
                    let (reply, read) = try await harness.read(document.id, principal: me, offset: Int64(offset), length: length)
                    #expect(read == bytes.subdata(in: offset..<offset + length))
                    #expect(reply.count == length && reply.totalLength == Int64(total) && reply.offset == Int64(offset))
                    #expect(reply.etag == document.sha256)
                }
                // Running over the end gives what is there; at or past the end gives nothing.
                let (short, tail) = try await harness.read(document.id, principal: me, offset: Int64(total - 5), length: 100)
                #expect(tail == bytes.suffix(5) && short.count == 5)
                for offset in [total, total + 1, total * 4] {
                    let (past, none) = try await harness.read(document.id, principal: me, offset: Int64(offset), length: 100)
                    #expect(none.isEmpty && past.count == 0 && past.totalLength == Int64(total))
                }
                let negative = await #expect(throws: BusError.self) { try await harness.read(document.id, principal: me, offset: -1, length: 10) }
                #expect(negative?.code == .invalidArgument)
                let tooLong = await #expect(throws: BusError.self) {
                    try await harness.read(document.id, principal: me, offset: 0, length: DocumentsHarness.chunkSize + 1)
                }
                #expect(tooLong?.code == .invalidArgument)
            }
        }

        @Test("bytes that do not match the declared type are unsupported_media_type and nothing of them is kept", arguments: Storage.allCases)
        func magicMismatch(storage: Storage) async throws {
            try await DocumentsHarness.run(storage: storage) { harness in
                let owner = UUID()
                let cases: [(String, Data)] = [
                    ("image/png", Samples.jpeg), ("image/jpeg", Samples.png), ("application/pdf", Samples.mp4),
                    ("video/mp4", Samples.pdf), ("image/gif", Samples.png), ("image/webp", Samples.jpeg), ("image/heic", Samples.mp4),
                    ("video/quicktime", Samples.pdf),
                ]
                for (fileType, bytes) in cases {
                    let created = try await harness.create(owner: owner, fileType: fileType, length: Int64(bytes.count))
                    let error = await #expect(throws: BusError.self, "\(fileType)") {
                        try await harness.append(created.id, owner: owner, offset: 0, bytes)
                    }
                    #expect(error?.code == .unsupportedMediaType, "\(fileType)")
                    let status = try await harness.client.call(
                        DocumentsUploadStatus.self, .init(id: created.id), principal: DocumentsHarness.user(owner))
                    #expect(status.offset == 0 && !status.complete)
                }
                // The matching type is accepted (the declared type may carry parameters and capitals).
                let ok = try await harness.store(owner: owner, Samples.mp4, type: .highlightVideo, fileType: "Video/QuickTime")
                #expect(ok.fileType == "video/quicktime" && ok.isVideo)
                let bad = await #expect(throws: BusError.self) { try await harness.create(owner: owner, fileType: "not a type", length: 10) }
                #expect(bad?.code == .invalidArgument)
            }
        }

        @Test("a type we cannot preview is accepted with canPreview false; a PDF cut off is flagged possibly corrupt", arguments: Storage.allCases)
        func unpreviewableAndCorrupt(storage: Storage) async throws {
            try await DocumentsHarness.run(storage: storage) { harness in
                let owner = UUID()
                let word = try await harness.store(
                    owner: owner, Samples.bytes(4000, seed: 5), type: .resume, title: "Resume",
                    fileType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
                #expect(word.bytesState == .available && !word.canPreview && !word.possiblyCorrupt)
                let cut = Samples.pdf.prefix(30) + Samples.bytes(5000, seed: 6)
                let corrupt = try await harness.store(owner: owner, Data(cut), title: "Cut off")
                #expect(corrupt.isPDF && corrupt.possiblyCorrupt)
                let whole = try await harness.store(owner: owner, Samples.pdf)
                #expect(!whole.possiblyCorrupt)
            }
        }
    }
}
