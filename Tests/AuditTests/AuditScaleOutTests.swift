import Bus
import Contracts
import Foundation
import TestSupport
import Testing

/// Two Audit instances on one database, as a Kubernetes StatefulSet runs them: each writes its own
/// chains (`AUDIT_CHAIN_OFFSET`), so their writers never wait on each other's chain locks, and the
/// whole log still verifies as one.
@Suite struct AuditScaleOutTests {
    @Test func twoInstancesWriteDisjointChainsThatAllVerify() async throws {
        try await AuditHarness.run(writers: 2) { harness in
            let (second, secondClient) = try await harness.startAnotherAudit(writers: 2, chainOffset: 2)
            defer { second.kill() }
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version

            func record(_ client: RPCClient, _ count: Int) async throws -> [ConsentReceipt] {
                try await withThrowingTaskGroup(of: ConsentReceipt.self) { group in
                    for _ in 0..<count {
                        group.addTask {
                            try await client.call(
                                AuditRecord.self,
                                .init(
                                    userId: UUID(), documentType: .termsOfService, version: version, action: .accept,
                                    clientIP: "203.0.113.9", userAgent: "scale-out"),
                                principal: AuditHarness.operatorPrincipal, idempotencyKey: UUID().uuidString, timeout: .seconds(30))
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            async let firstReceipts = record(harness.auditClient, 200)
            async let secondReceipts = record(secondClient, 200)
            let (first, other) = try await (firstReceipts, secondReceipts)
            await secondClient.close()

            #expect(Set(first.map(\.chain)).isSubset(of: [0, 1]))
            #expect(Set(other.map(\.chain)).isSubset(of: [2, 3]))
            let verification = try await harness.verify()
            #expect(verification.valid, "\(verification)")
            #expect(verification.chains.map(\.records).reduce(0, +) == 400)
        }
    }
}
