import Bus
import Contracts
import Foundation
import Synchronization
import TestSupport
import Testing

extension ReliabilityTests {
    /// kill -9 of a service while clients write at full speed: every acknowledged write is stored,
    /// and clients retrying with the same idempotency keys (or the same Apple id) create nothing twice.
    @Suite("Reliability: kill -9 under load")
    struct KillUnderLoadTests {
        static let writes = 3_000

        @Test("Audit SIGKILLed mid-load: acknowledged receipts all stored; retries with the same keys add no rows")
        func auditKilledUnderLoad() async throws {
            try await Stack.run { stack in
                let terms = try await stack.currentTerms()
                let users = (0..<Self.writes).map { _ in UUID() }
                let acknowledged = Tally()
                let receipts = Locked<[Int: ConsentReceipt]>([:])
                // 256 clients at a time, each writing as fast as it is answered.
                let load = Task {
                    try? await forEachConcurrently(Self.writes, width: 256) { index in
                        guard
                            let receipt = try? await stack.audit.call(
                                AuditRecord.self,
                                .init(
                                    userId: users[index], documentType: .termsOfService, version: terms, action: .accept,
                                    clientIP: "203.0.113.7", userAgent: "reliability"),
                                principal: Stack.operatorPrincipal, idempotencyKey: "kill-\(index)", timeout: .seconds(5))
                        else { return }
                        acknowledged.add()
                        receipts.withLock { $0[index] = receipt }
                    }
                }
                try await withTimeout(.seconds(60), "the first 300 acknowledgements") {
                    while acknowledged.count < 300 { try await Task.sleep(for: .milliseconds(2)) }
                }
                stack.kill("Audit")
                await load.value
                let killedAt = ContinuousClock.now
                try await stack.start("Audit")
                let restart = ContinuousClock.now - killedAt
                let beforeRetry = receipts.withLock { $0 }
                let stored = try await stack.database.pool.withConnection { db in
                    try Set(db.query("SELECT record_id FROM audit.records").map { try $0.decode(UUID.self, column: 0) })
                }
                let lost = beforeRetry.values.filter { !stored.contains($0.recordId) }
                #expect(beforeRetry.count >= 300 && beforeRetry.count < Self.writes, "acknowledged \(beforeRetry.count) of \(Self.writes)")
                #expect(lost.isEmpty, "\(lost.count) acknowledged records are missing")

                // Every client retries every write with its key: acknowledged ones replay their receipt.
                let replayMismatches = Tally()
                try await forEachConcurrently(Self.writes, width: 128) { index in
                    let receipt = try await stack.audit.call(
                        AuditRecord.self,
                        .init(
                            userId: users[index], documentType: .termsOfService, version: terms, action: .accept,
                            clientIP: "203.0.113.7", userAgent: "reliability"),
                        principal: Stack.operatorPrincipal, idempotencyKey: "kill-\(index)", timeout: .seconds(30))
                    if let first = beforeRetry[index], first.recordId != receipt.recordId { replayMismatches.add() }
                }
                let rows = try await stack.count("SELECT count(*)::bigint FROM audit.records")
                #expect(rows == Self.writes, "\(rows) rows for \(Self.writes) distinct keys")
                #expect(replayMismatches.count == 0)
                let verified = try await stack.audit.call(AuditVerify.self, Empty(), principal: Stack.operatorPrincipal, timeout: .seconds(60))
                #expect(verified.valid)
                print(
                    "RELIABILITY audit-kill acknowledged=\(beforeRetry.count) lost=\(lost.count) rows-after-retry=\(rows) keys=\(Self.writes) duplicates=\(rows - Self.writes) restart-to-ready=\(restart)"
                )
            }
        }

        @Test("Accounts SIGKILLed during sign-ups: every acknowledged user exists once; retried sign-ups create no duplicate")
        func accountsKilledDuringSignUps() async throws {
            let signUps = 600
            try await Stack.run { stack in
                let terms = try await stack.currentTerms()
                let appleIds = (0..<signUps).map { "apple.kill.\($0).\(UUID().uuidString)" }
                let acknowledged = Tally()
                let users = Locked<[Int: UUID]>([:])
                let killed = Locked(false)
                // 32 clients at a time (each sign-up is three services and two transactions). Once
                // Accounts is dead no new sign-up starts: each would only wait out its 10 s
                // deadline (three minutes of idling for the 550 left); the retries below make them all.
                let load = Task {
                    try? await forEachConcurrently(signUps, width: 32) { index in
                        guard !killed.withLock({ $0 }),
                            let user = try? await stack.accounts.call(
                                AccountsGetOrCreate.self, stack.signUpRequest(appleId: appleIds[index], terms: terms),
                                principal: Stack.gateway, timeout: .seconds(10)), let id = user.id
                        else { return }
                        acknowledged.add()
                        users.withLock { $0[index] = id }
                    }
                }
                try await withTimeout(.seconds(60), "the first 50 sign-ups") {
                    while acknowledged.count < 50 { try await Task.sleep(for: .milliseconds(2)) }
                }
                killed.withLock { $0 = true }
                stack.kill("Accounts")
                await load.value
                try await stack.start("Accounts")
                let before = users.withLock { $0 }
                let stored = try await stack.database.pool.withConnection { db in
                    try Set(db.query("SELECT id FROM accounts.users").map { try $0.decode(UUID.self, column: 0) })
                }
                let lost = before.values.filter { !stored.contains($0) }
                #expect(before.count >= 50 && before.count < signUps, "acknowledged \(before.count) of \(signUps)")
                #expect(lost.isEmpty, "\(lost.count) acknowledged users are missing")

                // The app retries every sign-up: get_or_create must find, not create again.
                let changedIds = Tally()
                try await forEachConcurrently(signUps, width: 32) { index in
                    let user = try await stack.accounts.call(
                        AccountsGetOrCreate.self, stack.signUpRequest(appleId: appleIds[index], terms: terms), principal: Stack.gateway)
                    if let first = before[index], first != user.id { changedIds.add() }
                }
                let rows = try await stack.count("SELECT count(*)::bigint FROM accounts.users")
                let distinct = try await stack.count("SELECT count(DISTINCT apple_id)::bigint FROM accounts.users")
                #expect(rows == signUps && distinct == signUps, "\(rows) users, \(distinct) Apple ids, \(signUps) sign-ups")
                #expect(changedIds.count == 0)
                // Each user's terms acceptance is in Audit once, however often the sign-up was retried.
                try await stack.waitForChained()
                let acceptances = try await stack.count("SELECT count(*)::bigint FROM audit.records")
                #expect(acceptances == signUps, "\(acceptances) acceptance records for \(signUps) users")
                print(
                    "RELIABILITY accounts-kill acknowledged=\(before.count) lost=\(lost.count) users-after-retry=\(rows) signups=\(signUps) duplicates=\(rows - signUps) audit-acceptances=\(acceptances)"
                )
            }
        }
    }
}

/// Runs `body` for every index below `count`, at most `width` at a time (as a fleet of retrying
/// clients would, rather than all at once).
func forEachConcurrently(_ count: Int, width: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var next = 0
        while next < min(width, count) {
            group.addTask { [next] in try await body(next) }
            next += 1
        }
        while try await group.next() != nil {
            if next < count {
                group.addTask { [next] in try await body(next) }
                next += 1
            }
        }
    }
}
