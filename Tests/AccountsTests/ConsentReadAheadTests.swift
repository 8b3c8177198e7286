import Bus
import Contracts
import Foundation
import Locks
import TestSupport
import Testing

/// Audit reads the next page of the consent stream while it chains the one before, whenever a
/// backlog waits (``AccountsConsentsSince/Request/readAfter``): Accounts keeps the entries the
/// reader has not chained yet, and a backlog of several pages, with Audit killed in the middle of
/// it, is chained once each and in order.
@Suite(.serialized) struct ConsentReadAheadTests {
    @Test func aReadAheadKeepsWhatIsNotChainedYet() async throws {
        try await AccountsHarness.run(extra: ConsentStreamTests.quick) { harness in
            let version = try await harness.currentTerms()
            var users: [UUID] = []
            for _ in 0..<4 { users.append(try #require(try await harness.signUp().id)) }
            try await harness.waitForChained()
            await harness.stop("Audit")
            for user in users { _ = try await harness.accept(user, version) }
            let entries = try await harness.streamEntries(count: 4)
            func read(after: ConsentStreamPosition, chained: ConsentStreamPosition) async throws -> [ConsentStreamPosition] {
                try await harness.accountsClient.call(
                    AccountsConsentsSince.self, .init(after: chained, readAfter: after), principal: AccountsHarness.operatorPrincipal
                ).entries.map(\.position)
            }
            // The page after the second entry, nothing chained yet: the first two stay.
            #expect(try await read(after: entries[1].position, chained: .start) == entries.suffix(2).map(\.position))
            #expect(try await harness.streamRows() == 4)
            // The first chained: it goes, the second stays.
            #expect(try await read(after: entries[1].position, chained: entries[0].position) == entries.suffix(2).map(\.position))
            #expect(try await harness.streamRows() == 3)
            // A page that would start before what is chained is refused, and prunes nothing.
            let refused = try await harness.refusal { try await read(after: entries[1].position, chained: entries[2].position) }
            #expect(refused.code == .invalidArgument)
            #expect(try await harness.streamRows() == 3)
        }
    }

    @Test func aBacklogOfManyPagesIsChainedOnceInOrderThroughAKill() async throws {
        try await AccountsHarness.run(extra: ConsentStreamTests.quick) { harness in
            let version = try await harness.currentTerms()
            var signedUp: [UUID] = []
            for _ in 0..<40 { signedUp.append(try #require(try await harness.signUp().id)) }
            let users = signedUp
            try await harness.waitForChained()
            await harness.stop("Audit")
            // Eight pages of 1,000 wait, so Audit reads ahead from its first page on.
            let stop = LockedValue(false)
            let load = Task { try await harness.acceptInBatches(users, version: version, agent: "backlog", until: stop) }
            try await withTimeout(.seconds(60), "a backlog of 8,000 acts") {
                while try await harness.streamRows() < 8_000 { try await Task.sleep(for: .milliseconds(50)) }
            }
            stop.withLock { $0 = true }
            let acks = try await load.value
            let streamed = try await harness.wholeStreamUnpruned(count: acks).compactMap(\.recordId)
            #expect(streamed.count == acks)
            try await harness.startAudit()
            // Killed three times just after a page commits, at different points of the next one
            // (read ahead, pruned up to the page before it, being chained).
            for pause in [0, 15, 30] {
                let before = try await harness.auditRecordCount()
                try await withTimeout(.seconds(60), "Audit chaining a page of the backlog") {
                    while try await harness.auditRecordCount() == before { try await Task.sleep(for: .milliseconds(2)) }
                }
                try await Task.sleep(for: .milliseconds(pause))
                await harness.kill("Audit")
                try await harness.startAudit()
            }
            try await harness.waitForChained(timeout: .seconds(90))
            #expect(try await harness.auditRecordCount() == acks + users.count, "every acknowledged acceptance once, and each sign-up")
            let backlog = Set(streamed)
            let chained = try await harness.database.pool.withConnection { db in
                try db.query("SELECT record_id FROM audit.records ORDER BY chain, position").map { try $0.decode(UUID.self) }
            }
            #expect(chained.filter(backlog.contains) == streamed, "chained in stream order")
            let verified = try await harness.auditClient.call(
                AuditVerify.self, Empty(), principal: AccountsHarness.operatorPrincipal, timeout: .seconds(60))
            #expect(verified.valid)
        }
    }
}

extension AccountsHarness {
    /// Every readable entry of the stream, read page by page as an operator without pruning any
    /// (each read says nothing is chained); read again (bounded) until `count` entries are
    /// readable, as ``streamEntries(count:)`` does.
    func wholeStreamUnpruned(count: Int) async throws -> [AccountsConsentsSince.Entry] {
        try await withTimeout(.seconds(20), "\(count) readable consent stream entries") { [accountsClient] in
            while true {
                var entries: [AccountsConsentsSince.Entry] = []
                while true {
                    let page = try await accountsClient.call(
                        AccountsConsentsSince.self, .init(after: .start, readAfter: entries.last?.position ?? .start),
                        principal: Self.operatorPrincipal
                    ).entries
                    if page.isEmpty { break }
                    entries += page
                }
                if entries.count >= count { return entries }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}
