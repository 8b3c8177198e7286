import Bus
import Contracts
import Foundation
import Postgres
import TestSupport
import Testing

/// `audit.record` and its reads against the real Legal and Audit executables and PostgreSQL.
@Suite(.serialized) struct AuditRecordTests {
    @Test func recordsReceiptsStatusAndHistory() async throws {
        try await AuditHarness.run { harness in
            let user = UUID()
            let terms = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService))
            #expect(try await harness.status(user, .termsOfService).needsAcceptance)

            let receipt = try await harness.record(user, .termsOfService, terms.summary.version, key: "k1")
            #expect(receipt.digest == terms.summary.digest)
            #expect(receipt.position >= 1 && receipt.hash.count == 64 && !receipt.signature.isEmpty)
            let verified = try await harness.auditClient.call(AuditVerifyReceipt.self, receipt)
            #expect(verified.valid)
            var forged = receipt
            forged.version = "9.9"
            #expect(try await harness.auditClient.call(AuditVerifyReceipt.self, forged).valid == false)

            // The same key: the original receipt, nothing written.
            let again = try await harness.record(user, .termsOfService, terms.summary.version, key: "k1")
            #expect(again.recordId == receipt.recordId && again.hash == receipt.hash)
            #expect(try await harness.recordCount() == 1)

            let status = try await harness.status(user, .termsOfService)
            #expect(!status.needsAcceptance && status.lastVersion == terms.summary.version && status.lastAction == .accept)

            let privacy = try await harness.legalClient.call(LegalCurrent.self, .init(type: .privacyPolicy))
            _ = try await harness.record(user, .privacyPolicy, privacy.summary.version, .acknowledge, key: "k2")
            #expect(!(try await harness.status(user, .privacyPolicy).needsAcceptance))
            _ = try await harness.record(user, .termsOfService, terms.summary.version, .decline, key: "k3")
            #expect(try await harness.status(user, .termsOfService).needsAcceptance)

            let first = try await harness.auditClient.call(
                AuditHistory.self, .init(userId: user, limit: 2), principal: AuditHarness.operatorPrincipal)
            #expect(first.records.count == 2 && first.next != nil)
            let second = try await harness.auditClient.call(
                AuditHistory.self, .init(userId: user, limit: 2, before: first.next), principal: AuditHarness.operatorPrincipal)
            #expect(second.records.count == 1 && second.next == nil)
            let all = (first.records + second.records).map(\.receipt.recordId)
            #expect(Set(all).count == 3 && all.contains(receipt.recordId))
            #expect(first.records[0].clientIP == "203.0.113.7")
            #expect(try await harness.auditClient.call(AuditVerifyReceipt.self, first.records[0].receipt).valid)
        }
    }

    /// A batch's rows travel as array literals (one `INSERT … FROM unnest`): text that array
    /// syntax gives meaning to (quotes, backslashes, braces, commas, the word NULL, a real nil)
    /// comes back exactly as sent, and the chain it extends verifies.
    @Test func awkwardTextIsStoredExactlyAndTheChainVerifies() async throws {
        try await AuditHarness.run(writers: 1) { harness in
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            let agents: [String?] = [#"say "hi" \ {a,b} "#, "NULL", nil, "", "Ünïcødé 🏈 \\x00ff", #"\x41"#]
            let items = agents.enumerated().map { index, agent in
                AuditRecordBatch.Item(
                    record: .init(
                        userId: UUID(), documentType: .termsOfService, version: version, action: .accept,
                        clientIP: index == 2 ? nil : "2001:db8::\(index)", userAgent: agent),
                    idempotencyKey: "awkward-\(index)")
            }
            let receipts = try await harness.auditClient.call(
                AuditRecordBatch.self, .init(items: items), principal: AuditHarness.operatorPrincipal
            ).outcomes.map { try $0.get() }
            #expect(Set(receipts.map(\.position)).count == agents.count)
            for (item, receipt) in zip(items, receipts) {
                let history = try await harness.auditClient.call(
                    AuditHistory.self, .init(userId: item.record.userId, limit: 5), principal: AuditHarness.operatorPrincipal)
                #expect(history.records.count == 1)
                #expect(history.records.first?.userAgent == item.record.userAgent)
                #expect(history.records.first?.clientIP == item.record.clientIP)
                #expect(history.records.first?.receipt.hash == receipt.hash)
            }
            let verification = try await harness.verify()
            #expect(verification.valid, "\(verification)")
        }
    }

    /// A batch's receipts are signed once, together: they share one signature over their Merkle
    /// root, each carries its own inclusion proof, and each verifies alone through
    /// `audit.verify_receipt`; a proof borrowed from a neighbour does not. Receipts read back
    /// through the history are signed one by one, and a caller that asks for no signatures gets none.
    @Test func aBatchsReceiptsShareOneSignatureAndEachVerifiesAlone() async throws {
        try await AuditHarness.run(writers: 1) { harness in
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            let users = (0..<6).map { _ in UUID() }
            func items(_ prefix: String, _ count: Int) -> [AuditRecordBatch.Item] {
                (0..<count).map { index in
                    AuditRecordBatch.Item(
                        record: .init(
                            userId: prefix == "signed" ? users[index] : UUID(), documentType: .termsOfService, version: version, action: .accept),
                        idempotencyKey: "\(prefix)-\(index)")
                }
            }
            let receipts = try await harness.auditClient.call(
                AuditRecordBatch.self, .init(items: items("signed", 6)), principal: AuditHarness.operatorPrincipal
            ).outcomes.map { try $0.get() }
            #expect(Set(receipts.map(\.signature)).count == 1 && !receipts[0].signature.isEmpty)
            #expect(receipts.map { $0.proof?.index } == Array(0..<6) && receipts.allSatisfy { $0.proof?.size == 6 })
            for receipt in receipts {
                #expect(try await harness.auditClient.call(AuditVerifyReceipt.self, receipt).valid)
            }
            var borrowed = receipts[1]
            borrowed.proof = receipts[2].proof
            #expect(try await harness.auditClient.call(AuditVerifyReceipt.self, borrowed).valid == false)

            let unsigned = try await harness.auditClient.call(
                AuditRecordBatch.self, .init(items: items("unsigned", 2), signReceipts: false), principal: AuditHarness.operatorPrincipal
            ).outcomes.map { try $0.get() }
            #expect(unsigned.allSatisfy { $0.signature.isEmpty && $0.proof == nil })

            let reread = try #require(
                try await harness.auditClient.call(AuditHistory.self, .init(userId: users[3], limit: 1), principal: AuditHarness.operatorPrincipal)
                    .records.first?.receipt)
            #expect(reread.recordId == receipts[3].recordId && reread.proof == nil && reread.signature != receipts[3].signature)
            #expect(try await harness.auditClient.call(AuditVerifyReceipt.self, reread).valid)
        }
    }

    /// A repeated key reaches the database only when the bus's reply cache cannot answer it (here:
    /// a new Audit process). The batch's `COPY` is refused by the key's unique index, and the batch
    /// runs again with its earlier receipts: the repeats get their originals, the new records in the
    /// same batch are written once, and the chain stays valid.
    @Test func keysRecordedBeforeARestartGetTheirOriginalReceiptsInAMixedBatch() async throws {
        try await AuditHarness.run(writers: 1) { harness in
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            let users = (0..<6).map { _ in UUID() }
            func items(_ range: Range<Int>) -> [AuditRecordBatch.Item] {
                range.map { index in
                    AuditRecordBatch.Item(
                        record: .init(userId: users[index], documentType: .termsOfService, version: version, action: .accept),
                        idempotencyKey: "mixed-\(index)")
                }
            }
            let first = try await harness.auditClient.call(
                AuditRecordBatch.self, .init(items: items(0..<3), signReceipts: false), principal: AuditHarness.operatorPrincipal
            ).outcomes.map { try $0.get() }
            await harness.stopAudit()
            try await harness.startAudit(writers: 1)
            let second = try await harness.auditClient.call(
                AuditRecordBatch.self, .init(items: items(0..<6), signReceipts: false), principal: AuditHarness.operatorPrincipal,
                timeout: .seconds(30)
            ).outcomes.map { try $0.get() }
            #expect(second.prefix(3).map(\.recordId) == first.map(\.recordId), "repeats must get their original receipts")
            #expect(Set(second.suffix(3).map(\.recordId)).isDisjoint(with: first.map(\.recordId)))
            #expect(try await harness.recordCount() == 6)
            #expect(try await harness.verify().valid)
        }
    }

    @Test func badInputGetsAClearErrorAndWritesNothing() async throws {
        try await AuditHarness.run { harness in
            let user = UUID()
            let current = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            await expectCode(.invalidArgument) { try await harness.record(user, .termsOfService, "no-such-version") }
            await expectCode(.invalidArgument) { try await harness.record(user, .termsOfService, current, ip: "not-an-ip") }
            await expectCode(.invalidArgument) { try await harness.record(user, .termsOfService, current, .acknowledge) }
            await expectCode(.invalidArgument) { try await harness.record(user, .termsOfService, "") }
            // Refused by the version rule itself, before the catalog is asked.
            for malformed in [String(repeating: "1", count: 33), "1.0;DROP"] {
                do {
                    _ = try await harness.record(user, .termsOfService, malformed)
                    Issue.record("\(malformed) was recorded")
                } catch let error as BusError {
                    #expect(error.code == .invalidArgument && error.message.hasPrefix("version "), "\(error)")
                }
            }
            await expectCode(.invalidArgument) {
                try await harness.record(user, .termsOfService, current, agent: String(repeating: "a", count: 2000))
            }
            await expectCode(.forbidden) {
                try await harness.auditClient.call(
                    AuditRecord.self, .init(userId: user, documentType: .termsOfService, version: current, action: .accept),
                    principal: .user(UUID().uuidString))
            }
            await expectCode(.forbidden) { try await harness.auditClient.call(AuditVerify.self, Empty(), principal: .user(user.uuidString)) }
            await expectCode(.forbidden) {
                try await harness.auditClient.call(AuditEraseSubject.self, .init(userId: user), principal: .user(user.uuidString))
            }

            // Raw envelopes: no idempotency key; an unknown document type; a malformed user id.
            let valid = #"{"userId":"\#(user.uuidString)","documentType":"terms_of_service","version":"\#(current)","action":"accept"}"#
            #expect(try await harness.raw(valid, key: nil).error?.code == .invalidArgument)
            let unknownType = valid.replacingOccurrences(of: "terms_of_service", with: "cookie_policy")
            #expect(try await harness.raw(unknownType, key: "x").error?.code == .invalidArgument)
            let badUser = valid.replacingOccurrences(of: user.uuidString, with: "not-a-uuid")
            #expect(try await harness.raw(badUser, key: "y").error?.code == .invalidArgument)
            #expect(try await harness.raw(valid, key: "").error?.code == .invalidArgument)

            #expect(try await harness.recordCount() == 0)
            // The valid envelope is accepted, so the refusals above were about what they changed.
            #expect(try await harness.raw(valid, key: "z").error == nil)
            #expect(try await harness.recordCount() == 1)
        }
    }

    @Test func anonymousCallersAreRefusedAndRecordNothing() async throws {
        try await AuditHarness.run { harness in
            let user = UUID()
            let current = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            let record = AuditRecord.Request(userId: user, documentType: .termsOfService, version: current, action: .accept)
            // No principal at all (the plaintext bus then takes the request as anonymous), and an
            // explicit anonymous one, on every method that records or reads.
            for principal in [nil, Principal.anonymous] {
                await expectCode(.unauthenticated) {
                    try await harness.auditClient.call(AuditRecord.self, record, principal: principal, idempotencyKey: UUID().uuidString)
                }
                await expectCode(.unauthenticated) {
                    try await harness.auditClient.call(
                        AuditRecordBatch.self, .init(items: [.init(record: record, idempotencyKey: UUID().uuidString)]), principal: principal)
                }
                await expectCode(.unauthenticated) { try await harness.auditClient.call(AuditStatus.self, .init(userId: user), principal: principal) }
                await expectCode(.unauthenticated) {
                    try await harness.auditClient.call(AuditHistory.self, .init(userId: user), principal: principal)
                }
                await expectCode(.unauthenticated) {
                    try await harness.auditClient.call(AuditSelect.self, .init(userId: user, query: .init()), principal: principal)
                }
            }
            let valid = #"{"userId":"\#(user.uuidString)","documentType":"terms_of_service","version":"\#(current)","action":"accept"}"#
            let refused = try await harness.raw(valid, key: "anonymous", principal: nil).error
            #expect(refused?.code == .unauthenticated)
            #expect(refused?.message.contains("principal") == true, "\(String(describing: refused))")
            #expect(try await harness.recordCount() == 0)
            // The same record with a principal is stored: the refusals were about the caller.
            #expect(try await harness.raw(valid, key: "anonymous").error == nil)
            #expect(try await harness.recordCount() == 1)
        }
    }

    @Test func materialVersionsAskAgainAndEditorialOnesDoNot() async throws {
        try await AuditHarness.run { harness in
            let user = UUID()
            let first = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            _ = try await harness.record(user, .termsOfService, first)
            #expect(!(try await harness.status(user, .termsOfService).needsAcceptance))

            try await harness.publish(.termsOfService, "1.0.1-editorial", material: false)
            // Status reads the versions Audit has learned from Legal's events.
            try await harness.waitForVersion(.termsOfService, "1.0.1-editorial")
            let editorial = try await harness.status(user, .termsOfService)
            #expect(editorial.currentVersion == "1.0.1-editorial" && !editorial.needsAcceptance)

            let effective = Date().addingTimeInterval(2)
            try await harness.publish(.termsOfService, "2.0", material: true, effectiveAt: effective)
            try await harness.waitForVersion(.termsOfService, "2.0")
            let pending = try await harness.status(user, .termsOfService)
            #expect(pending.currentVersion == "1.0.1-editorial" && !pending.needsAcceptance)

            try await Task.sleep(until: .now + .seconds(effective.timeIntervalSinceNow + 0.2))
            let material = try await harness.status(user, .termsOfService)
            #expect(material.currentVersion == "2.0" && material.needsAcceptance)
            _ = try await harness.record(user, .termsOfService, "2.0")
            #expect(!(try await harness.status(user, .termsOfService).needsAcceptance))
        }
    }
}

/// Expects `body` to fail with a bus error of `code`.
func expectCode(_ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> some Any) async {
    do {
        _ = try await body()
        Issue.record("expected \(code), got a success", sourceLocation: sourceLocation)
    } catch let error as BusError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

extension AuditHarness {
    func recordCount() async throws -> Int {
        try await database.pool.withConnection { db in try db.query("SELECT count(*)::bigint FROM audit.records")[0].decode(Int.self, column: 0) }
    }

    /// Sends `audit.record` with a hand-written payload (as an operator unless told otherwise)
    /// and returns the reply envelope.
    func raw(_ payload: String, key: String?, principal: Principal? = AuditHarness.operatorPrincipal) async throws -> Envelope {
        let envelope = Envelope(
            kind: .request, type: AuditRecord.type, principal: principal, idempotencyKey: key, payload: Data(payload.utf8))
        return try await auditClient.send(envelope, timeout: .seconds(10)).envelope
    }
}
