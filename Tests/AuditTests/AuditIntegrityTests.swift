import Bus
import Contracts
import Foundation
import Locks
import Postgres
import TestSupport
import Testing

/// Group commit under load, failures inside a batch, tamper evidence, erasure and catch-up,
/// against the real executables.
@Suite(.serialized) struct AuditIntegrityTests {
    @Test func tenThousandConcurrentWritesHalfRetriedAreAllStoredOnce() async throws {
        try await AuditHarness.run { harness in
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            let total = 10_000
            let users = (0..<500).map { _ in UUID() }
            // Every write once, and every even one a second time with the same key, concurrently.
            let calls = (0..<total).map { ($0, false) } + stride(from: 0, to: total, by: 2).map { ($0, true) }
            let receipts = try await withThrowingTaskGroup(of: (Int, ConsentReceipt).self) { group in
                var results: [Int: [ConsentReceipt]] = [:]
                var pending = calls.shuffled().makeIterator()
                func addNext() -> Bool {
                    guard let (index, _) = pending.next() else { return false }
                    group.addTask {
                        let receipt = try await harness.record(users[index % users.count], .termsOfService, version, key: "write-\(index)")
                        return (index, receipt)
                    }
                    return true
                }
                for _ in 0..<256 where addNext() {}
                while let (index, receipt) = try await group.next() {
                    results[index, default: []].append(receipt)
                    _ = addNext()
                }
                return results
            }
            #expect(receipts.count == total)
            for (index, copies) in receipts {
                #expect(copies.count == (index % 2 == 0 ? 2 : 1))
                #expect(Set(copies.map(\.recordId)).count == 1, "retry of write \(index) got a different record")
            }
            let stored = try await harness.database.pool.withConnection { db in
                try db.query("SELECT record_id FROM audit.records").map { try $0.decode(UUID.self, column: 0) }
            }
            #expect(stored.count == total)
            #expect(Set(stored) == Set(receipts.values.map { $0[0].recordId }))
            let verification = try await harness.verify()
            #expect(verification.valid, "\(verification)")
            #expect(verification.chains.map(\.records).reduce(0, +) == Int64(total))
        }
    }

    @Test func aFailingRecordFailsAloneAndItsBatchNeighboursCommit() async throws {
        try await AuditHarness.run(writers: 1) { harness in
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            // A database rule that rejects one kind of row, as a constraint or a full disk would.
            try await harness.database.pool.withConnection { db in
                try db.executeScript(
                    """
                    CREATE FUNCTION audit.reject_poison() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        IF NEW.user_agent = 'poison' THEN RAISE EXCEPTION 'poisoned record'; END IF;
                        RETURN NEW;
                    END $$;
                    CREATE TRIGGER reject_poison BEFORE INSERT ON audit.records FOR EACH ROW EXECUTE FUNCTION audit.reject_poison();
                    """)
            }
            let outcomes = await withTaskGroup(of: (Int, Result<ConsentReceipt, any Error>).self) { group in
                for index in 0..<300 {
                    group.addTask {
                        do {
                            let agent = index % 50 == 7 ? "poison" : "ok"
                            return (index, .success(try await harness.record(UUID(), .termsOfService, version, agent: agent)))
                        } catch { return (index, .failure(error)) }
                    }
                }
                var outcomes: [Int: Result<ConsentReceipt, any Error>] = [:]
                for await (index, outcome) in group { outcomes[index] = outcome }
                return outcomes
            }
            var committed: Set<UUID> = []
            for (index, outcome) in outcomes {
                switch outcome {
                case .success(let receipt):
                    #expect(index % 50 != 7, "poisoned write \(index) was acknowledged")
                    committed.insert(receipt.recordId)
                case .failure(let error):
                    #expect(index % 50 == 7, "write \(index) failed: \(error)")
                    #expect((error as? BusError)?.code == .internal)
                }
            }
            #expect(committed.count == 294)
            let stored = try await harness.database.pool.withConnection { db in
                try Set(db.query("SELECT record_id FROM audit.records").map { try $0.decode(UUID.self, column: 0) })
            }
            #expect(stored == committed)
            #expect(try await harness.verify().valid)
        }
    }

    @Test func verificationFindsAnEditedRowAndAForgedCheckpoint() async throws {
        try await AuditHarness.run(writers: 1) { harness in
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            for _ in 0..<20 { _ = try await harness.record(UUID(), .termsOfService, version) }
            // A restart writes a checkpoint at shutdown.
            await harness.stopAudit()
            try await harness.startAudit(writers: 1)
            let clean = try await harness.verify()
            #expect(clean.valid && clean.chains.first { $0.chain == 0 }?.records == 20)
            let checkpoints = try await harness.database.pool.withConnection { db in
                try db.query("SELECT count(*)::bigint FROM audit.checkpoints")[0].decode(Int.self, column: 0)
            }
            #expect(checkpoints == 1)

            try await harness.sql("UPDATE audit.records SET version = 'edited' WHERE chain = 0 AND position = 5")
            let edited = try await harness.verify()
            #expect(!edited.valid)
            #expect(edited.chains.first { $0.chain == 0 }?.firstBrokenPosition == 5)
            try await harness.sql("UPDATE audit.records SET version = $1 WHERE chain = 0 AND position = 5", version)
            #expect(try await harness.verify().valid)

            try await harness.sql("UPDATE audit.records SET client_ip = '198.51.100.1' WHERE chain = 0 AND position = 9")
            #expect(try await harness.verify().chains.first { $0.chain == 0 }?.firstBrokenPosition == 9)
            try await harness.sql("UPDATE audit.records SET client_ip = '203.0.113.7' WHERE chain = 0 AND position = 9")

            try await harness.sql("DELETE FROM audit.records WHERE chain = 0 AND position = 12")
            #expect(try await harness.verify().chains.first { $0.chain == 0 }?.firstBrokenPosition == 12)
        }
    }

    @Test func forgedCheckpointIsReported() async throws {
        try await AuditHarness.run(writers: 1) { harness in
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            for _ in 0..<3 { _ = try await harness.record(UUID(), .termsOfService, version) }
            await harness.stopAudit()
            try await harness.startAudit(writers: 1)
            #expect(try await harness.verify().badCheckpoints.isEmpty)
            try await harness.sql("UPDATE audit.checkpoints SET position = position - 1")
            let forged = try await harness.verify()
            #expect(!forged.valid && forged.badCheckpoints.count == 1)
        }
    }

    @Test func erasureRemovesThePersonalLinkAndKeepsTheChainValid() async throws {
        try await AuditHarness.run { harness in
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            let (erased, kept) = (UUID(), UUID())
            let receipt = try await harness.record(erased, .termsOfService, version)
            _ = try await harness.record(erased, .termsOfService, version, .decline)
            _ = try await harness.record(kept, .termsOfService, version)

            let reply = try await harness.auditClient.call(AuditEraseSubject.self, .init(userId: erased), principal: AuditHarness.operatorPrincipal)
            #expect(reply.erasedRecords == 2)
            #expect(
                try await harness.auditClient.call(AuditHistory.self, .init(userId: erased), principal: AuditHarness.operatorPrincipal).records
                    .isEmpty)
            #expect(try await harness.status(erased, .termsOfService).lastAction == nil)
            #expect(
                try await harness.auditClient.call(AuditHistory.self, .init(userId: kept), principal: AuditHarness.operatorPrincipal).records.count
                    == 1)

            let personal = try await harness.database.pool.withConnection { db in
                try db.query(
                    """
                    SELECT count(*)::bigint FROM audit.records
                    WHERE client_ip IS NOT NULL OR user_agent IS NOT NULL OR idempotency_hash IS NOT NULL
                    """)[0].decode(Int.self, column: 0)
            }
            #expect(personal == 1)
            let subjects = try await harness.database.pool.withConnection { db in
                try db.query("SELECT count(*)::bigint FROM audit.subjects WHERE user_id = $1", erased)[0].decode(Int.self, column: 0)
            }
            #expect(subjects == 0)
            #expect(try await harness.recordCount() == 3)
            #expect(try await harness.verify().valid)
            #expect(try await harness.auditClient.call(AuditVerifyReceipt.self, receipt).valid)
            let again = try await harness.auditClient.call(AuditEraseSubject.self, .init(userId: erased), principal: .service("accounts"))
            #expect(again.erasedRecords == 0)
        }
    }

    @Test(arguments: [SIGTERM, SIGKILL])
    func everyAcknowledgedRecordSurvivesTheServiceStopping(signal: Int32) async throws {
        try await AuditHarness.run { harness in
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            // Calls keep coming while the service is stopped under them. Few users, so most batches
            // are written in one statement on the writers' kept heads and subjects.
            let users = (0..<40).map { _ in UUID() }
            let acknowledgedSoFar = Counter()
            let calls = Task {
                await withTaskGroup(of: ConsentReceipt?.self) { group in
                    for index in 0..<2_000 {
                        group.addTask {
                            let receipt = try? await harness.auditClient.call(
                                AuditRecord.self,
                                .init(userId: users[index % users.count], documentType: .termsOfService, version: version, action: .accept),
                                principal: AuditHarness.operatorPrincipal, idempotencyKey: "stop-\(index)", timeout: .seconds(3))
                            if receipt != nil { acknowledgedSoFar.increment() }
                            return receipt
                        }
                    }
                    var acknowledged: [ConsentReceipt] = []
                    for await receipt in group { if let receipt { acknowledged.append(receipt) } }
                    return acknowledged
                }
            }
            try await withTimeout(.seconds(30), "the first acknowledgements") {
                while acknowledgedSoFar.value < 100 { try await Task.sleep(for: .milliseconds(2)) }
            }
            if signal == SIGKILL { harness.killAudit() } else { await harness.stopAudit() }
            let acknowledged = await calls.value
            try await harness.startAudit()
            let stored = try await harness.database.pool.withConnection { db in
                try Set(db.query("SELECT record_id FROM audit.records").map { try $0.decode(UUID.self, column: 0) })
            }
            #expect(acknowledged.count >= 100)
            let lost = acknowledged.filter { !stored.contains($0.recordId) }
            #expect(lost.isEmpty, "\(lost.count) acknowledged records are not in the database")
            #expect(try await harness.verify().valid)
        }
    }

    @Test func catchesUpOnVersionsPublishedWhileDown() async throws {
        try await AuditHarness.run { harness in
            // Audit has applied Legal's seeded versions.
            try await harness.waitForVersion(.privacyPolicy, harness.legalClient.call(LegalCurrent.self, .init(type: .privacyPolicy)).summary.version)
            await harness.stopAudit()
            let published = try await harness.publish(.privacyPolicy, "2.0-while-down", material: true)
            try await harness.startAudit()
            // No record asks for it: the consumer's catch-up alone must bring it in.
            try await harness.waitForVersion(.privacyPolicy, "2.0-while-down")
            let digest = try await harness.database.pool.withConnection { db in
                try db.query("SELECT digest FROM audit.legal_versions WHERE version = '2.0-while-down'")[0].decode(String.self, column: 0)
            }
            #expect(digest == published.digest)
        }
    }
}

extension AuditHarness {
    func sql(_ statement: String, _ parameters: (any PostgresEncodable)?...) async throws {
        try await database.pool.withConnection { db in _ = try db.execute(statement, parameters: parameters) }
    }

    /// Waits (bounded) until Audit's own table holds the version: applied from events, not fetched.
    func waitForVersion(_ type: LegalDocumentType, _ version: String) async throws {
        let pool = database.pool
        try await withTimeout(.seconds(20), "audit learning \(type.rawValue) \(version)") {
            while true {
                let found = try await pool.withConnection { db in
                    try db.query("SELECT 1 FROM audit.legal_versions WHERE document_type = $1 AND version = $2", type.rawValue, version).count
                }
                if found == 1 { return }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}

/// A count shared by concurrent tasks.
final class Counter: Sendable {
    private let count = LockedValue(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
