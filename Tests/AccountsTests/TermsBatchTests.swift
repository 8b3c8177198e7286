import AccountsService
import Bus
import Contracts
import Foundation
import Postgres
import TestSupport
import Testing

/// `accounts.accept_terms_batch` through the real Audit and Legal services: each item answered as
/// `accept_terms` would answer it alone, a bad item failing alone, and a retried batch recording
/// each acceptance once (Audit chains them from the consent stream).
@Suite(.serialized) struct TermsBatchTests {
    @Test func eachItemIsAnsweredOnItsOwnAndARetryRecordsOnce() async throws {
        try await AccountsHarness.run { harness in
            let version = try await harness.currentTerms()
            let first = try #require(try await harness.signUp().id)
            let second = try #require(try await harness.signUp().id)
            let item = { (user: UUID, version: String, key: String, ip: String) in
                AccountsAcceptTermsBatch.Item(
                    request: .init(userId: user, tosVersion: version, clientIP: ip, userAgent: "PlayoffChallenge/1.0"), idempotencyKey: key)
            }
            let batch = AccountsAcceptTermsBatch.Request(items: [
                item(first, version, "k1", "198.51.100.4"),
                item(second, version, "k2", "198.51.100.5"),
                item(second, "1999-01-01", "k3", "198.51.100.5"),  // not the version in effect
                item(UUID(), version, "k4", "198.51.100.6"),  // no such user
                item(first, version, "k5", "not-an-address"),  // bad input
                item(first, version, "k1", "198.51.100.4"),  // the first key again
                item(first, "1.0;DROP", "k6", "198.51.100.4"),  // no version Legal could publish
            ])
            let reply = try await harness.accountsClient.call(AccountsAcceptTermsBatch.self, batch, principal: AccountsHarness.gateway)
            #expect(reply.outcomes.count == 7)
            for index in [0, 1, 5] {
                let user = try reply.outcomes[index].get()
                #expect(user.hasAcceptedTOS && !user.needsToAcceptTOS && user.tosVersion == version)
            }
            #expect(reply.outcomes[2].error?.code == .conflict)
            #expect(reply.outcomes[3].error?.code == .notFound)
            #expect(reply.outcomes[4].error?.code == .invalidArgument)
            #expect(reply.outcomes[6].error?.code == .invalidArgument && reply.outcomes[6].error?.message.hasPrefix("tosVersion") == true)
            // The stored state is what the replies said, and Audit holds one acceptance per key.
            let read = try await harness.get(first)
            #expect(read.hasAcceptedTOS && read.tosVersion == version)
            #expect(read.tosAcceptedAt == (try await harness.auditHistory(first).first?.receipt.recordedAt))
            let countAccepts = { (id: UUID) in try await harness.auditHistory(id).filter { $0.receipt.action == .accept }.count }
            let (firstBefore, secondBefore) = (try await countAccepts(first), try await countAccepts(second))
            // The whole batch again (a retry after a lost reply): nothing new is recorded.
            let again = try await harness.accountsClient.call(AccountsAcceptTermsBatch.self, batch, principal: AccountsHarness.gateway)
            #expect(again.outcomes.map { $0.error?.code } == reply.outcomes.map { $0.error?.code })
            // Each user of a key used before is answered as stored (the statement's branch for acts not written).
            for index in [0, 1, 5] {
                #expect(try again.outcomes[index].get() == (try reply.outcomes[index].get()), "item \(index) answered as stored")
            }
            #expect(try await countAccepts(first) == firstBefore)
            #expect(try await countAccepts(second) == secondBefore)
        }
    }

    @Test func onlyServicesActingForUsersMayBatch() async throws {
        try await AccountsHarness.run { harness in
            let version = try await harness.currentTerms()
            let id = try #require(try await harness.signUp().id)
            let batch = AccountsAcceptTermsBatch.Request(items: [.init(request: .init(userId: id, tosVersion: version), idempotencyKey: "k")])
            let asUser = try await harness.refusal {
                try await harness.accountsClient.call(AccountsAcceptTermsBatch.self, batch, principal: .user(id.uuidString.lowercased()))
            }
            #expect(asUser.code == .forbidden)
            let empty = try await harness.refusal {
                try await harness.accountsClient.call(AccountsAcceptTermsBatch.self, .init(items: []), principal: AccountsHarness.gateway)
            }
            #expect(empty.code == .invalidArgument)
        }
    }

    /// Concurrent batches over the same users, each listing them in another order, all succeed:
    /// the batch statement locks its rows in id order, so two batches never wait on each other in
    /// a cycle. (Before, rows were locked in whatever order the plan met them, and under the gateway
    /// benchmark a batch now and then waited out `lock_timeout` in a deadlock: a 503 for its items.)
    @Test func concurrentBatchesOverTheSameUsersNeverDeadlock() async throws {
        try await AccountsHarness.run { harness in
            let version = try await harness.currentTerms()
            var signedUp: [UUID] = []
            for _ in 0..<24 { signedUp.append(try #require(try await harness.signUp().id)) }
            let users = signedUp
            // No lock_timeout on this pool: a deadlock surfaces as PostgreSQL's own 40P01.
            let pool = PostgresPool(configuration: harness.database.pool.configuration, maxConnections: 8, logger: TestDatabase.logger())
            let store = AccountsStore(pool: pool)
            let failures = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        var failed = 0
                        for _ in 0..<40 {
                            do {
                                let stored = try await store.accept(
                                    users.shuffled().map {
                                        AcceptanceItem(
                                            user: $0, version: version, key: UUID().uuidString, clientIP: "198.51.100.7", userAgent: "t",
                                            recordId: UUID())
                                    })
                                if stored.count != users.count { failed += 1 }
                            } catch {
                                failed += 1
                            }
                        }
                        return failed
                    }
                }
                return try await group.reduce(0, +)
            }
            await pool.close()
            #expect(failures == 0)
        }
    }
}
