import Bus
import Contracts
import Foundation
import TestSupport
import Testing

/// `accounts.accept_terms_batch` through the real Audit and Legal services: each item answered as
/// `accept_terms` would answer it alone, a bad item failing alone, and a retried batch recording
/// each acceptance once.
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
            ])
            let reply = try await harness.accountsClient.call(AccountsAcceptTermsBatch.self, batch, principal: AccountsHarness.gateway)
            #expect(reply.outcomes.count == 6)
            for index in [0, 1, 5] {
                let user = try reply.outcomes[index].get()
                #expect(user.hasAcceptedTOS && !user.needsToAcceptTOS && user.tosVersion == version)
            }
            #expect(reply.outcomes[2].error?.code == .conflict)
            #expect(reply.outcomes[3].error?.code == .notFound)
            #expect(reply.outcomes[4].error?.code == .invalidArgument)
            // The stored state is what the replies said, and Audit holds one acceptance per key.
            let read = try await harness.get(first)
            #expect(read.hasAcceptedTOS && read.tosVersion == version)
            #expect(read.tosAcceptedAt == (try await harness.auditHistory(first).first?.receipt.recordedAt))
            let countAccepts = { (id: UUID) in try await harness.auditHistory(id).filter { $0.receipt.action == .accept }.count }
            let (firstBefore, secondBefore) = (try await countAccepts(first), try await countAccepts(second))
            // The whole batch again (a retry after a lost reply): nothing new is recorded.
            let again = try await harness.accountsClient.call(AccountsAcceptTermsBatch.self, batch, principal: AccountsHarness.gateway)
            #expect(again.outcomes.map { $0.error?.code } == reply.outcomes.map { $0.error?.code })
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
}
