import Bus
import Contracts
import Foundation
import Locks
import TestSupport
import Testing

/// Accounts as the one synchronous writer of an act, Audit chaining it from the consent stream:
/// acts are accepted while Audit is down and chained once it is back, none lost and none twice;
/// a kill -9 of Audit mid-page loses and doubles nothing; a deletion reaches Audit after the acts
/// before it; the stream's IP addresses go once chained and at deletion; past its backlog limit
/// an act is refused with a retry hint.
@Suite(.serialized) struct ConsentStreamTests {
    static let quick = ["ACCOUNTS_CONSENT_RECEIPT_WAIT": "50ms", "ACCOUNTS_CONSENT_BACKLOG_INTERVAL": "100ms"]

    @Test func actsAreAcceptedWithAuditDownAndChainedOnceWhenItReturns() async throws {
        try await AccountsHarness.run(extra: Self.quick) { harness in
            let version = try await harness.currentTerms()
            var users: [UUID] = []
            for _ in 0..<6 { users.append(try #require(try await harness.signUp().id)) }
            try await harness.waitForChained()
            await harness.stop("Audit")
            // Single calls and a batch, all answered while Audit is down.
            for user in users.prefix(3) {
                let reply = try await harness.accept(user, version)
                #expect(reply.hasAcceptedTOS && !reply.needsToAcceptTOS)
            }
            let batch = AccountsAcceptTermsBatch.Request(
                items: users.suffix(3).map {
                    .init(
                        request: .init(userId: $0, tosVersion: version, clientIP: "198.51.100.8", userAgent: "PlayoffChallenge/1.0"),
                        idempotencyKey: "batch-\($0)")
                })
            let replies = try await harness.accountsClient.call(AccountsAcceptTermsBatch.self, batch, principal: AccountsHarness.gateway)
            #expect(replies.outcomes.allSatisfy { (try? $0.get().hasAcceptedTOS) == true })
            // The same batch again (a retry): answered, nothing written twice.
            _ = try await harness.accountsClient.call(AccountsAcceptTermsBatch.self, batch, principal: AccountsHarness.gateway)
            #expect(try await harness.streamRows() == 6)
            #expect(try await harness.streamRowsWithAddress() == 6)
            #expect(try await harness.get(users[0]).hasAcceptedTOS)

            try await harness.startAudit()
            try await harness.waitForChained()
            for user in users {
                let accepts = try await harness.auditHistory(user).filter { $0.receipt.action == .accept }
                #expect(accepts.count == 2, "sign-up and one acceptance, once each")
                let stored = try #require(try await harness.storedAcceptance(user))
                #expect(accepts.first?.receipt.recordedAt == stored, "the record's time is the acceptance's")
            }
            let verified = try await harness.auditClient.call(
                AuditVerify.self, Empty(), principal: AccountsHarness.operatorPrincipal, timeout: .seconds(30))
            #expect(verified.valid)
            #expect(try await harness.streamRows() == 0, "chained entries, and their addresses, are gone from Accounts")
        }
    }

    /// A page goes without looking its keys up first; a key Audit recorded before (here through
    /// audit.record_batch, as the two-writer path did) refuses the page's insert, and the page is
    /// chained again looking the keys up: that act is not recorded twice, the others once.
    @Test func anActWhoseKeyAuditRecordedBeforeIsChainedOnce() async throws {
        try await AccountsHarness.run(extra: Self.quick) { harness in
            let version = try await harness.currentTerms()
            var users: [UUID] = []
            for _ in 0..<3 { users.append(try #require(try await harness.signUp().id)) }
            try await harness.waitForChained()
            let earlier = AuditRecordBatch.Item(
                record: .init(userId: users[1], documentType: .termsOfService, version: version, action: .accept, clientIP: nil, userAgent: nil),
                idempotencyKey: "accounts.accept:again-\(users[1])")  // the key the stream gives the batch's act
            _ = try await harness.auditClient.call(
                AuditRecordBatch.self, .init(items: [earlier], signReceipts: false), principal: AccountsHarness.operatorPrincipal
            ).outcomes.map { try $0.get() }
            let batch = AccountsAcceptTermsBatch.Request(
                items: users.map {
                    .init(
                        request: .init(userId: $0, tosVersion: version, clientIP: "198.51.100.8", userAgent: "PlayoffChallenge/1.0"),
                        idempotencyKey: "again-\($0)")
                })
            let replies = try await harness.accountsClient.call(AccountsAcceptTermsBatch.self, batch, principal: AccountsHarness.gateway)
            #expect(replies.outcomes.allSatisfy { (try? $0.get().hasAcceptedTOS) == true })
            try await harness.waitForChained()
            for user in users {
                let accepts = try await harness.auditHistory(user).filter { $0.receipt.action == .accept }
                #expect(accepts.count == 2, "sign-up and one acceptance, once each")
            }
            let verified = try await harness.auditClient.call(
                AuditVerify.self, Empty(), principal: AccountsHarness.operatorPrincipal, timeout: .seconds(30))
            #expect(verified.valid)
        }
    }

    @Test func aDeletionReachesAuditAfterTheActsBeforeItAndPurgesTheirAddresses() async throws {
        try await AccountsHarness.run(extra: Self.quick.merging(["ACCOUNTS_ERASURE_SWEEP_INTERVAL": "1h"]) { $1 }) { harness in
            let version = try await harness.currentTerms()
            let id = try #require(try await harness.signUp().id)
            try await harness.waitForChained()
            let request = try await harness.requestDeletion(id)
            await harness.stop("Audit")
            _ = try await harness.accept(id, version)
            #expect(try await harness.streamRowsWithAddress() == 1)
            _ = try await harness.confirmDeletion(id, request.requestId)
            #expect(try await harness.streamRows() == 2, "the acceptance, then the deletion")
            #expect(try await harness.streamRowsWithAddress() == 0, "the deletion cleared the address at once")

            try await harness.startAudit()
            try await harness.waitForChained()
            #expect(try await harness.auditHistory(id).isEmpty, "erased after the acceptance was chained")
            #expect(try await harness.auditRecordCount() == 2, "the sign-up and the acceptance stay, pseudonymised")
            #expect(try await harness.auditSubjects() == 0, "no subject was left for the deleted user")
            let verified = try await harness.auditClient.call(
                AuditVerify.self, Empty(), principal: AccountsHarness.operatorPrincipal, timeout: .seconds(30))
            #expect(verified.valid)
        }
    }

    @Test func pastTheBacklogLimitActsAreRefusedWithARetryHint() async throws {
        try await AccountsHarness.run(extra: Self.quick.merging(["ACCOUNTS_CONSENT_BACKLOG_LIMIT": "3"]) { $1 }) { harness in
            let version = try await harness.currentTerms()
            var users: [UUID] = []
            for _ in 0..<5 { users.append(try #require(try await harness.signUp().id)) }
            try await harness.waitForChained()
            await harness.stop("Audit")
            for user in users.prefix(4) { _ = try await harness.accept(user, version) }
            try await Task.sleep(for: .milliseconds(400))  // a few counts of the backlog
            // Refused `unavailable`; the bus client retries that within its deadline (a slowed-down
            // caller), here a short one.
            let refused = try await harness.refusal {
                try await harness.accountsClient.call(
                    AccountsAcceptTerms.self, .init(userId: users[4], tosVersion: version, clientIP: "198.51.100.4"),
                    principal: .user(users[4].uuidString), idempotencyKey: "refused", timeout: .seconds(2))
            }
            #expect(refused.code == .unavailable)
            #expect(refused.details?["retryAfterSeconds"] != nil)
            #expect(try await harness.streamRows() == 4, "the refused act wrote nothing")

            try await harness.startAudit()
            try await harness.waitForChained()
            try await Task.sleep(for: .milliseconds(400))
            #expect(try await harness.accept(users[4], version).hasAcceptedTOS)
        }
    }

    /// Batches of acceptances go on while Audit is killed (SIGKILL) again and again, most likely
    /// in the middle of a page; every acknowledged acceptance is in Audit exactly once.
    @Test func killingAuditMidPageLosesAndDoublesNothing() async throws {
        try await AccountsHarness.run(extra: Self.quick) { harness in
            let version = try await harness.currentTerms()
            var signedUp: [UUID] = []
            for _ in 0..<40 { signedUp.append(try #require(try await harness.signUp().id)) }
            let users = signedUp
            try await harness.waitForChained()
            let stop = LockedValue(false)
            let load = Task { try await harness.acceptInBatches(users, version: version, agent: "load", until: stop) }
            for _ in 0..<4 {
                try await Task.sleep(for: .milliseconds(700))
                await harness.kill("Audit")
                try await Task.sleep(for: .milliseconds(300))
                try await harness.startAudit()
            }
            try await Task.sleep(for: .milliseconds(500))
            stop.withLock { $0 = true }
            let acks = try await load.value
            let stopped = ContinuousClock.now
            try await harness.waitForChained(timeout: .seconds(60))
            let records = try await harness.auditRecordCount()
            #expect(acks > 0)
            #expect(records == acks + users.count, "every acknowledged acceptance once, and each sign-up")
            print(
                "RELIABILITY audit-kill-mid-page kills=4 acknowledged=\(acks) records=\(records) signups=\(users.count) lost-or-doubled=\(records - acks - users.count) chained-after-load=\(ContinuousClock.now - stopped)"
            )
            let verified = try await harness.auditClient.call(
                AuditVerify.self, Empty(), principal: AccountsHarness.operatorPrincipal, timeout: .seconds(60))
            #expect(verified.valid)
        }
    }
}

extension AccountsHarness {
    /// Accepts `version` for every one of `users` in batches, as the gateway calls Accounts, from
    /// `workers` callers at once, each round with new idempotency keys, until `stop` is set; how
    /// many acts Accounts acknowledged.
    func acceptInBatches(_ users: [UUID], version: String, workers: Int = 4, agent: String, until stop: LockedValue<Bool>) async throws -> Int {
        let acknowledged = LockedValue(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var round = 0
                    while !stop.withLock({ $0 }) {
                        round += 1
                        let items = users.map {
                            AccountsAcceptTermsBatch.Item(
                                request: .init(userId: $0, tosVersion: version, clientIP: "198.51.100.9", userAgent: agent),
                                idempotencyKey: "w\(worker)-r\(round)-\($0)")
                        }
                        let reply = try await self.accountsClient.call(
                            AccountsAcceptTermsBatch.self, .init(items: items), principal: AccountsHarness.gateway, timeout: .seconds(30))
                        acknowledged.withLock { $0 += reply.outcomes.filter { $0.error == nil }.count }
                    }
                }
            }
            try await group.waitForAll()
        }
        return acknowledged.withLock { $0 }
    }

    /// Rows in Accounts' consent stream (not yet chained by Audit).
    func streamRows() async throws -> Int {
        try await database.pool.withConnection { db in
            try db.query("SELECT count(*)::bigint FROM accounts.consent_outbox")[0].decode(Int.self, column: 0)
        }
    }

    /// Rows in the stream that still hold an IP address or user agent.
    func streamRowsWithAddress() async throws -> Int {
        try await database.pool.withConnection { db in
            try db.query("SELECT count(*)::bigint FROM accounts.consent_outbox WHERE client_ip IS NOT NULL OR user_agent IS NOT NULL")[0]
                .decode(Int.self, column: 0)
        }
    }

    /// The user's `tos_accepted_at` as Accounts stored it.
    func storedAcceptance(_ id: UUID) async throws -> Date? {
        try await database.pool.withConnection { db in
            try db.query("SELECT tos_accepted_at FROM accounts.users WHERE id = $1", id).first?.decode(Date?.self, column: 0)
        }
    }

    /// Audit's subjects (users with records that still link to them).
    func auditSubjects() async throws -> Int {
        try await database.pool.withConnection { db in try db.query("SELECT count(*)::bigint FROM audit.subjects")[0].decode(Int.self, column: 0) }
    }
}
