import Bus
import Contracts
import Foundation
import Locks
import TestSupport
import Testing

extension DocumentsSuites {
    @Suite("Documents: transfer limit")
    struct TransferLimitTests {
        @Test("beyond DOCUMENTS_MAX_TRANSFERS, reads are refused unavailable at once; the others complete")
        func limit() async throws {
            try await DocumentsHarness.run(settings: ["DOCUMENTS_MAX_TRANSFERS": "1"]) { harness in
                let owner = UUID()
                let bytes = Samples.pdf + Samples.bytes(DocumentsHarness.chunkSize, seed: 4)
                let document = try await harness.store(owner: owner, bytes)
                let outcomes = Outcomes()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<40 {
                        group.addTask {
                            do {
                                let (_, read) = try await harness.read(
                                    document.id, principal: DocumentsHarness.user(owner), offset: 0, length: DocumentsHarness.chunkSize)
                                #expect(read == bytes.prefix(DocumentsHarness.chunkSize))
                                outcomes.codes.withLock { $0.append(nil) }
                            } catch let error as BusError {
                                outcomes.codes.withLock { $0.append(error.code) }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let codes = outcomes.codes.withLock { $0 }
                #expect(codes.count == 40)
                #expect(codes.contains(nil), "some reads complete")
                #expect(codes.contains(.unavailable), "some reads are refused")
                #expect(codes.allSatisfy { $0 == nil || $0 == .unavailable })
            }
        }
    }
}

/// What each concurrent call ended with (nil: success).
final class Outcomes: Sendable {
    let codes = LockedValue<[ErrorCode?]>([])
}
