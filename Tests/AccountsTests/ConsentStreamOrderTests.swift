import Bus
import Contracts
import Foundation
import Hex
import Locks
import Postgres
import TestSupport
import Testing

@testable import AccountsService

/// The consent stream's order (Accounts migration 0180): entries in (transaction, id) order, read
/// only once every transaction that could write before them has ended, so an entry that commits
/// late is read after the ones before it and never skipped; a user's entries in the order their
/// transactions committed, even when a writer got its transaction id before waiting for the
/// user's lock; two Audit instances following at once chain each entry once; an Audit still at a
/// position of the numbered stream goes on from it.
@Suite(.serialized) struct ConsentStreamOrderTests {
    @Test func anEntryThatCommitsLateHoldsBackTheLaterOnesAndNothingIsSkipped() async throws {
        try await AccountsHarness.run(extra: ConsentStreamTests.quick) { harness in
            let version = try await harness.currentTerms()
            let early = try #require(try await harness.signUp().id)
            let later = try #require(try await harness.signUp().id)
            try await harness.waitForChained()
            await harness.stop("Audit")
            let written = AsyncStream<Void>.makeStream()
            let release = LockedValue(false)
            let lateRecord = UUID.timeOrdered()
            // A decline of `early`, written as Accounts writes one, by a transaction that stays open.
            let open = Task {
                try await harness.database.pool.withTransaction { db in
                    try db.execute(
                        """
                        INSERT INTO accounts.consent_outbox
                            (xid, kind, user_id, record_id, document_type, version, action, idempotency_key, recorded_ms, client_ip)
                        VALUES (accounts.consent_order_key(), 'consent', $1, $2,
                            'terms_of_service', $3, 'decline', 'late', (extract(epoch FROM now()) * 1000)::bigint, '198.51.100.7')
                        """, early, lateRecord, version)
                    written.continuation.yield()
                    for _ in 0..<1000 where !release.withLock({ $0 }) { usleep(10_000) }
                }
            }
            var opened = written.stream.makeAsyncIterator()
            _ = await opened.next()
            // A later transaction, committed while the first is open: not read yet.
            #expect(try await harness.accept(later, version).hasAcceptedTOS)
            let whileOpen = try await harness.streamEntries()
            #expect(whileOpen.isEmpty, "an entry after an open transaction's waits for it: \(whileOpen)")
            release.withLock { $0 = true }
            try await open.value
            let entries = try await harness.streamEntries(count: 2)
            #expect(entries.map(\.userId) == [early, later], "both, the one that committed late first")
            #expect(entries.first?.recordId == lateRecord)
            #expect(entries.count == 2 && entries[0].position < entries[1].position)

            try await harness.startAudit()
            try await harness.waitForChained()
            #expect(Set(try await harness.auditHistory(early).map(\.receipt.action)) == [.accept, .decline], "the sign-up and the late decline")
            #expect(try await harness.auditHistory(later).filter { $0.receipt.action == .accept }.count == 2)
            let verified = try await harness.auditClient.call(
                AuditVerify.self, Empty(), principal: AccountsHarness.operatorPrincipal, timeout: .seconds(30))
            #expect(verified.valid)
        }
    }

    /// The deletion takes its request's lock, and with it a transaction id, before the user's; an
    /// acceptance with a later id holds the user (here: the users table, locked with no transaction
    /// id, then Accounts' own batch statement) and commits first. The deletion's entry must come
    /// after the acceptance's, or Audit would erase the user and then chain the acceptance.
    @Test func aDeletionThatWaitedForTheUserComesAfterTheActThatCommittedFirst() async throws {
        let extra = ConsentStreamTests.quick.merging(["ACCOUNTS_ERASURE_SWEEP_INTERVAL": "1h", "DATABASE_LOCK_TIMEOUT": "20s"]) { $1 }
        try await AccountsHarness.run(extra: extra) { harness in
            let version = try await harness.currentTerms()
            let id = try #require(try await harness.signUp().id)
            try await harness.waitForChained()
            let request = try await harness.requestDeletion(id)
            await harness.stop("Audit")
            let held = AsyncStream<Void>.makeStream()
            let batch = TermsBatchStatements(schema: "accounts").accepted
            let parameters: [(any PostgresEncodable)?] = [
                PostgresArrayLiteral.of([Hex.uuid(id)]), PostgresArrayLiteral.of([version]), PostgresArrayLiteral.of(["held"]),
                PostgresArrayLiteral.of(["198.51.100.8"]), PostgresArrayLiteral.of(["PlayoffChallenge/1.0"]),
                PostgresArrayLiteral.of([Hex.uuid(UUID.timeOrdered())]),
            ]
            let accepted = Task {
                try await harness.database.pool.withTransaction { db -> Bool in
                    try db.execute("LOCK TABLE accounts.users IN EXCLUSIVE MODE")
                    held.continuation.yield()
                    var waiting = false
                    for _ in 0..<1000 where !waiting {
                        waiting = try db.query(Self.waitingForUsers)[0].decode(Int.self, column: 0) > 0
                        if !waiting { usleep(10_000) }
                    }
                    _ = try db.query(batch, parameters: parameters)
                    return waiting
                }
            }
            var locked = held.stream.makeAsyncIterator()
            _ = await locked.next()
            let confirmed = Task { try await harness.confirmDeletion(id, request.requestId) }
            #expect(try await accepted.value, "the deletion waited for the users table")
            #expect(try await confirmed.value.userId == id)
            let entries = try await harness.streamEntries(count: 2)
            #expect(entries.map(\.kind) == [.consent, .deleted], "the acceptance, then the deletion")

            try await harness.startAudit()
            try await harness.waitForChained()
            #expect(try await harness.auditSubjects() == 0, "erased after the acceptance, which left no subject behind")
            #expect(try await harness.auditRecordCount() == 2, "the sign-up and the acceptance, pseudonymised")
        }
    }

    static let waitingForUsers = """
        SELECT count(*)::bigint FROM pg_locks
        WHERE relation = 'accounts.users'::regclass AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND NOT granted
        """

    /// A batch of two users locks the first, and so has its transaction id, then waits for the
    /// second, whose act (a later id) commits meanwhile. The batch's act of that user must come
    /// after it: its place is taken once every lock is held, with a snapshot newer than that commit.
    @Test func aBatchThatWaitedForAUserComesAfterTheActThatHeldIt() async throws {
        try await AccountsHarness.run(extra: ConsentStreamTests.quick.merging(["DATABASE_LOCK_TIMEOUT": "20s"]) { $1 }) { harness in
            let version = try await harness.currentTerms()
            let pair = [try #require(try await harness.signUp().id), try #require(try await harness.signUp().id)]
            let users = pair.sorted { $0.uuidString.lowercased() < $1.uuidString.lowercased() }
            let held = users[1]  // the batch locks users[0] first
            try await harness.waitForChained()
            await harness.stop("Audit")
            let locked = AsyncStream<Void>.makeStream()
            let go = LockedValue(false)
            let heldRecord = UUID.timeOrdered()
            let holder = Task {
                try await harness.database.pool.withTransaction { db in
                    _ = try db.query("SELECT 1 FROM accounts.users WHERE id = $1 FOR UPDATE", held)
                    locked.continuation.yield()
                    for _ in 0..<2000 where !go.withLock({ $0 }) { usleep(10_000) }
                    try db.execute(
                        """
                        INSERT INTO accounts.consent_outbox
                            (xid, kind, user_id, record_id, document_type, version, action, idempotency_key, recorded_ms, client_ip)
                        VALUES (accounts.consent_order_key(), 'consent', $1, $2, 'terms_of_service', $3, 'decline', 'held',
                            (extract(epoch FROM now()) * 1000)::bigint, '198.51.100.7')
                        """, held, heldRecord, version)
                }
            }
            var holding = locked.stream.makeAsyncIterator()
            _ = await holding.next()
            let batch = AccountsAcceptTermsBatch.Request(
                items: users.map { .init(request: .init(userId: $0, tosVersion: version, clientIP: "198.51.100.9"), idempotencyKey: "b-\($0)") })
            let accepted = Task {
                try await harness.accountsClient.call(AccountsAcceptTermsBatch.self, batch, principal: AccountsHarness.gateway, timeout: .seconds(30))
            }
            // Once the batch has locked users[0] (its transaction id) and waits for `held`, a
            // transaction with a later id commits, so the held act's place is after the batch's id.
            try await withTimeout(.seconds(20), "the batch waiting for the held user") {
                while try await harness.database.pool.withConnection({ db in try db.query(Self.waitingForTransaction)[0].decode(Int.self, column: 0) }
                ) == 0 {
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            try await harness.database.pool.withConnection { db in _ = try db.query("SELECT pg_current_xact_id()") }
            go.withLock { $0 = true }
            try await holder.value
            #expect(try await accepted.value.outcomes.allSatisfy { $0.error == nil })
            let entries = try await harness.streamEntries(count: 3).filter { $0.userId == held }
            #expect(entries.map(\.action) == [.decline, .accept], "the act that held the user, then the batch's")
            #expect(entries.first?.recordId == heldRecord)

            try await harness.startAudit()
            try await harness.waitForChained()
            let verified = try await harness.auditClient.call(
                AuditVerify.self, Empty(), principal: AccountsHarness.operatorPrincipal, timeout: .seconds(30))
            #expect(verified.valid)
        }
    }

    /// Backends of this test's database waiting for another's transaction (a row lock).
    static let waitingForTransaction = """
        SELECT count(*)::bigint FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'transactionid' AND NOT l.granted AND a.datname = current_database()
        """

    @Test func twoAuditInstancesFollowingAtOnceChainEachEntryOnce() async throws {
        try await AccountsHarness.run(extra: ConsentStreamTests.quick) { harness in
            let version = try await harness.currentTerms()
            var signedUp: [UUID] = []
            for _ in 0..<20 { signedUp.append(try #require(try await harness.signUp().id)) }
            let users = signedUp
            try await harness.waitForChained()
            // The second instance follows alone at first (its chain is 8), then both at once.
            await harness.stop("Audit")
            var environment = harness.auditEnvironment
            environment["RPC_BIND"] = ipcEndpoint()
            environment["AUDIT_CHAIN_OFFSET"] = "8"
            let second = try await PeerProcess("Audit", environment: environment)
            let stop = LockedValue(false)
            let joined = Task {
                defer { stop.withLock { $0 = true } }  // whatever happens, the acceptances end
                // Alone until it has chained a page: on a busy machine (a CI run, every suite at
                // once) its first took longer than the half second this phase once lasted, and the
                // first instance, back, then won every page.
                try await Task.sleep(for: .milliseconds(500))
                try await withTimeout(.seconds(60), "the second instance chaining alone") {
                    while try await harness.database.pool.withConnection({ db in
                        try db.query("SELECT count(*)::bigint FROM audit.records WHERE chain = 8")[0].decode(Int.self, column: 0)
                    }) == 0 {
                        try await Task.sleep(for: .milliseconds(50))
                    }
                }
                try await harness.startAudit()
                try await Task.sleep(for: .milliseconds(1500))
            }
            let acks = try await harness.acceptInBatches(users, version: version, agent: "two", until: stop)
            try await joined.value
            try await harness.waitForChained(timeout: .seconds(60))
            second.signal(SIGTERM)
            if await second.waitForExit(timeout: .seconds(15)) == nil { second.kill() }
            #expect(acks > 0)
            #expect(try await harness.auditRecordCount() == acks + users.count, "every acceptance once, and each sign-up")
            let byChain = try await harness.database.pool.withConnection { db in
                try db.query("SELECT chain, count(*)::bigint FROM audit.records GROUP BY chain ORDER BY chain").map {
                    try $0.decode(Int.self, Int.self)
                }
            }
            // (That the second instance chained is the wait above.)
            print("CONSENT two followers: records by chain \(byChain)")
            let verified = try await harness.auditClient.call(
                AuditVerify.self, Empty(), principal: AccountsHarness.operatorPrincipal, timeout: .seconds(60))
            #expect(verified.valid)
        }
    }

    /// An upgrade from the numbered stream: Audit's position is sequence number 7; the stream holds
    /// the act numbered 7 (chained), one numbered 8 and one never numbered.
    @Test func anAuditAtANumberedPositionGoesOnFromItAfterTheUpgrade() async throws {
        try await AccountsHarness.run(extra: ConsentStreamTests.quick) { harness in
            let version = try await harness.currentTerms()
            var users: [UUID] = []
            for _ in 0..<3 { users.append(try #require(try await harness.signUp().id)) }
            try await harness.waitForChained()
            await harness.stop("Audit")
            for user in users { _ = try await harness.accept(user, version) }
            try await harness.database.pool.withConnection { [users] db in
                try db.execute(
                    "UPDATE accounts.consent_outbox SET sequence = CASE user_id WHEN $1 THEN 7 ELSE 8 END WHERE user_id IN ($1, $2)",
                    users[0], users[1])
                try db.execute(
                    """
                    UPDATE audit.event_cursors SET last_sequence = 7, last_transaction = NULL, last_entry = NULL
                    WHERE publisher = 'accounts.consents'
                    """)
            }
            try await harness.startAudit()
            try await harness.waitForChained()
            let accepts = { (user: UUID) in try await harness.auditHistory(user).filter { $0.receipt.action == .accept }.count }
            #expect(try await accepts(users[0]) == 1, "the entry numbered 7 was chained before the upgrade: deleted, not chained again")
            #expect(try await accepts(users[1]) == 2, "the sign-up and the entry numbered 8")
            #expect(try await accepts(users[2]) == 2, "the sign-up and the entry never numbered")
            let moved = try await harness.database.pool.withConnection { db in
                try db.query("SELECT last_transaction IS NOT NULL FROM audit.event_cursors WHERE publisher = 'accounts.consents'")[0]
                    .decode(Bool.self, column: 0)
            }
            #expect(moved, "the position is a stream position now")
        }
    }
}

extension AccountsHarness {
    /// The whole readable stream, as an operator reads it (from the start: nothing is pruned);
    /// with `count`, read again (bounded) until that many entries are readable: a transaction of
    /// another suite on the same cluster can hold them back for a moment.
    func streamEntries(count: Int? = nil) async throws -> [AccountsConsentsSince.Entry] {
        let read: @Sendable () async throws -> [AccountsConsentsSince.Entry] = { [accountsClient] in
            try await accountsClient.call(AccountsConsentsSince.self, .init(after: .start), principal: Self.operatorPrincipal).entries
        }
        guard let count else { return try await read() }
        return try await withTimeout(.seconds(20), "\(count) readable consent stream entries") {
            while true {
                let entries = try await read()
                if entries.count >= count { return entries }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}
