import Bus
import Contracts
import Foundation
import Postgres
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A batch of users seen lately is written in one statement from the head and subjects its writer
/// kept (``BatchWriter``). These tests change what it was built on from outside, with a second
/// Audit instance on the same database, and check that nothing is written against a stale head or
/// an erased subject: the statement is refused (`path="stale"`) and the batch goes the two-round-trip
/// way.
@Suite struct AuditOneStatementTests {
    @Test func aSubjectErasedByAnotherInstanceIsNeverWrittenAgain() async throws {
        try await AuditHarness.run(writers: 1) { harness in
            let (second, secondClient) = try await harness.startAnotherAudit(writers: 1, chainOffset: 1)
            defer { second.kill() }
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            let user = UUID()
            let port = try #require(harness.audit?.healthPort)

            let first = try await harness.record(user, .termsOfService, version)
            let cached = try await harness.record(user, .termsOfService, version, .decline)
            #expect(try await Self.batchWrites(port)["one_statement"] == 1, "the second record reuses the first's head and subject")
            let erased = try await secondClient.call(AuditEraseSubject.self, .init(userId: user), principal: AuditHarness.operatorPrincipal)
            #expect(erased.erasedRecords == 2)

            let after = try await harness.record(user, .termsOfService, version)
            let writes = try await Self.batchWrites(port)
            #expect(writes["stale"] == 1, "the cached subject is refused: \(writes)")
            #expect(writes["one_statement"] == 1)

            let (old, new) = try await harness.database.pool.withConnection { db in
                (
                    try db.query("SELECT pseudonym FROM audit.erasures")[0].decode(UUID.self, column: 0),
                    try db.query("SELECT subject FROM audit.records WHERE record_id = $1", after.recordId)[0].decode(UUID.self, column: 0)
                )
            }
            #expect(old != new, "a record after the erasure gets a new subject, not the erased one")
            let onOld = try await harness.database.pool.withConnection { db in
                try db.query(
                    "SELECT record_id, client_ip IS NULL AND user_agent IS NULL FROM audit.records WHERE subject = $1 ORDER BY position", old
                ).map { try $0.decode(UUID.self, Bool.self) }
            }
            #expect(onOld.map(\.0) == [first.recordId, cached.recordId])
            let cleared = onOld.allSatisfy { $0.1 }
            #expect(cleared, "the erased subject's records keep no personal data")
            #expect(try await harness.verify().valid)
            await secondClient.close()
        }
    }

    @Test func twoInstancesWritingTheSameChainsKeepEachChainWhole() async throws {
        try await AuditHarness.run(writers: 2) { harness in
            // The same chains as the first instance (offset 0): allowed, and each one's kept head goes
            // stale whenever the other appended.
            let (second, secondClient) = try await harness.startAnotherAudit(writers: 2, chainOffset: 0)
            defer { second.kill() }
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            let users = (0..<8).map { _ in UUID() }

            func record(_ client: RPCClient, rounds: Int) async throws -> Int {
                var recorded = 0
                for _ in 0..<rounds {
                    recorded += try await withThrowingTaskGroup(of: Int.self) { group in
                        for user in users {
                            group.addTask {
                                _ = try await client.call(
                                    AuditRecord.self,
                                    .init(
                                        userId: user, documentType: .termsOfService, version: version, action: .accept, clientIP: "203.0.113.9",
                                        userAgent: "one-statement"),
                                    principal: AuditHarness.operatorPrincipal, idempotencyKey: UUID().uuidString, timeout: .seconds(30))
                                return 1
                            }
                        }
                        return try await group.reduce(0, +)
                    }
                }
                return recorded
            }
            async let one = record(harness.auditClient, rounds: 25)
            async let other = record(secondClient, rounds: 25)
            let recorded = try await one + other
            await secondClient.close()

            #expect(recorded == 400)
            let verification = try await harness.verify()
            #expect(verification.valid, "\(verification)")
            #expect(verification.chains.map(\.records).reduce(0, +) == 400)
            let writes = [
                try await Self.batchWrites(#require(harness.audit?.healthPort)), try await Self.batchWrites(#require(second.healthPort)),
            ]
            // Both paths ran: batches on a kept head, and kept heads the other instance had moved.
            #expect(writes.map { $0["one_statement", default: 0] }.reduce(0, +) > 0, "\(writes)")
            #expect(writes.map { $0["stale", default: 0] }.reduce(0, +) > 0, "\(writes)")
        }
    }

    /// `audit_batch_writes_total` by path, from an instance's `/metrics`.
    static func batchWrites(_ port: Int) async throws -> [String: Int] {
        let url = try #require(URL(string: "http://127.0.0.1:\(port)/metrics"))
        let (body, _) = try await URLSession.shared.data(from: url)
        var counts: [String: Int] = [:]
        for line in String(decoding: body, as: UTF8.self).split(separator: "\n") where line.hasPrefix("audit_batch_writes_total{") {
            guard let open = line.range(of: "path=\""), let close = line[open.upperBound...].firstIndex(of: "\""),
                let value = line.split(separator: " ").last.flatMap({ Double($0) })
            else { continue }
            counts[String(line[open.upperBound..<close])] = Int(value)
        }
        return counts
    }
}
