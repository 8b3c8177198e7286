import Bus
import Contracts
import Foundation
import Locks
import Postgres
import TestSupport
import Testing

extension ReliabilityTests {
    /// PostgreSQL stopped for 20 s (fast shutdown) under a load of seed `accept-tos` requests
    /// through the gateway, each retried with its `Idempotency-Key` until it is answered 200, as a
    /// client does: the containers' fault test, locally. Every acknowledged acceptance
    /// is then told apart three ways: committed by Accounts (its idempotency key is stored with the
    /// act), in the user's consent history as read the moment the load stops (the reads' promise:
    /// a user sees their own acts), and chained by Audit once the stream has drained.
    ///
    /// Before the fix, the read right after the outage missed thousands of acts that Accounts had
    /// committed and Audit chained seconds later: Audit's follower was in its failure backoff and
    /// the reads did not wait for a stream they had last found unreachable.
    @Suite("Reliability: PostgreSQL stopped for 20 s under gateway load")
    struct DatabaseStopTests {
        static let users = 8
        static let outage: Duration = .seconds(20)

        @Test func everyAcknowledgedAcceptanceIsCommittedReadAndChained() async throws {
            try await TestDatabase.withExclusiveCluster(maxConnections: 1) { _ in
                try await Stack.run(exclusive: false, gateway: true) { stack in
                    let terms = try await stack.currentTerms()
                    var users: [UUID] = []
                    for _ in 0..<Self.users { users.append(try await stack.signUp(terms: terms)) }
                    let http = GatewayHTTP(port: try stack.gatewayPort(), connections: Self.users)
                    defer { http.close() }
                    let load = AcceptanceKeysLoad(users: users)
                    let stop = Flag()
                    let running = load.run(http, terms: terms, until: stop)
                    try await load.waitForAcknowledged(100, "the load to start")
                    try await TestDatabase.restartCluster(mode: .fast, downFor: Self.outage)
                    let atRestart = load.acknowledgedCount
                    try await load.waitForAcknowledged(atRestart + 100, "acknowledgements after the restart")
                    stop.set()
                    await running.value

                    let acknowledged = load.acknowledged
                    let read = try await Self.historyCounts(stack, users)
                    let committed = try await Self.committedKeys(stack, users)
                    try await stack.waitForChained(timeout: .seconds(120))
                    let chained = try await Self.chainedAccepts(stack, users)
                    let report = StopReport(acknowledged: acknowledged, committed: committed, read: read, chained: chained)
                    print(
                        "RELIABILITY pg-stop-20s-gateway acknowledged=\(report.acknowledgedTotal) missing_in_accounts=\(report.missingInAccounts) missing_in_read=\(report.missingInRead) missing_in_audit=\(report.missingInAudit) duplicated=\(report.duplicated) failed_attempts=\(load.failedAttempts)"
                    )
                    #expect(report.missingInAccounts == 0, "acknowledged acceptances Accounts never committed")
                    #expect(report.missingInRead == 0, "acknowledged acceptances missing from the history read right after the load")
                    #expect(report.missingInAudit == 0, "acknowledged acceptances Audit never chained")
                    #expect(report.duplicated == 0, "acceptances chained more than once")
                    #expect(load.failedAttempts > 0, "no request failed during a \(Self.outage) stop")
                }
            }
        }

        /// Each user's accept records in their history, read as the user, page by page.
        static func historyCounts(_ stack: Stack, _ users: [UUID]) async throws -> [UUID: Int] {
            var counts: [UUID: Int] = [:]
            for user in users {
                var before: String?
                var count = 0
                repeat {
                    let page = try await stack.audit.call(
                        AuditHistory.self, .init(userId: user, documentType: .termsOfService, limit: 1000, before: before),
                        principal: .user(user.uuidString.lowercased()))
                    count += page.records.filter { $0.receipt.action == .accept }.count
                    before = page.next
                } while before != nil
                counts[user] = count
            }
            return counts
        }

        /// The client keys of the acts Accounts committed (its idempotency keys end with them).
        static func committedKeys(_ stack: Stack, _ users: [UUID]) async throws -> [UUID: Set<String>] {
            let rows = try await stack.withDatabase { db in
                try db.query(
                    "SELECT user_id, key FROM accounts.consent_keys WHERE user_id = ANY($1::uuid[])",
                    PostgresArrayLiteral.of(users.map { $0.uuidString.lowercased() })
                ).map { try $0.decode(UUID.self, String.self) }
            }
            var keys: [UUID: Set<String>] = [:]
            for (user, key) in rows { keys[user, default: []].insert(String(key.split(separator: ":").last ?? "")) }
            return keys
        }

        /// Each user's chained accept records.
        static func chainedAccepts(_ stack: Stack, _ users: [UUID]) async throws -> [UUID: Int] {
            var counts: [UUID: Int] = [:]
            for user in users {
                counts[user] = try await stack.count(
                    """
                    SELECT count(*)::bigint FROM audit.subjects s JOIN audit.records r ON r.subject = s.pseudonym
                    WHERE s.user_id = $1 AND r.action = 'accept'
                    """, user)
            }
            return counts
        }
    }
}

/// The acknowledged acceptances compared with what Accounts committed, what the history read
/// showed and what Audit chained (each user's sign-up acceptance is in the last two, not the first).
struct StopReport {
    let acknowledgedTotal: Int
    let missingInAccounts: Int
    let missingInRead: Int
    let missingInAudit: Int
    /// Chained records beyond the acknowledged ones: an act recorded twice.
    let duplicated: Int

    init(acknowledged: [UUID: Set<String>], committed: [UUID: Set<String>], read: [UUID: Int], chained: [UUID: Int]) {
        var total = 0
        var inAccounts = 0
        var inRead = 0
        var inAudit = 0
        var twice = 0
        for (user, keys) in acknowledged {
            total += keys.count
            inAccounts += keys.subtracting(committed[user] ?? []).count
            let signUp = 1
            inRead += max(0, keys.count + signUp - (read[user] ?? 0))
            inAudit += max(0, keys.count + signUp - (chained[user] ?? 0))
            twice += max(0, (chained[user] ?? 0) - keys.count - signUp)
        }
        acknowledgedTotal = total
        missingInAccounts = inAccounts
        missingInRead = inRead
        missingInAudit = inAudit
        duplicated = twice
    }
}

/// One sequential client per user: each acceptance a new `Idempotency-Key`, retried with the same
/// key every 50 ms until it is answered 200 (for at most 90 s, past any outage of the test).
final class AcceptanceKeysLoad: Sendable {
    let users: [UUID]
    private let keys: LockedValue<[UUID: Set<String>]> = LockedValue([:])
    private let failures = LockedValue(0)

    init(users: [UUID]) { self.users = users }

    var acknowledged: [UUID: Set<String>] { keys.withLock { $0 } }
    var acknowledgedCount: Int { keys.withLock { $0.values.reduce(0) { $0 + $1.count } } }
    var failedAttempts: Int { failures.withLock { $0 } }

    func run(_ http: GatewayHTTP, terms: String, until stop: Flag) -> Task<Void, Never> {
        Task {
            await withTaskGroup(of: Void.self) { group in
                for (index, user) in users.enumerated() {
                    group.addTask { [self] in
                        var number = 0
                        while !stop.isSet {
                            number += 1
                            let key = "stop-\(index)-\(number)"
                            let giveUp = ContinuousClock.now + .seconds(90)
                            while ContinuousClock.now < giveUp {
                                if (try? await http.acceptTerms(user: user, version: terms, key: key)) == 200 {
                                    keys.withLock { _ = $0[user, default: []].insert(key) }
                                    break
                                }
                                failures.withLock { $0 += 1 }
                                try? await Task.sleep(for: .milliseconds(50))
                            }
                        }
                    }
                }
            }
        }
    }

    func waitForAcknowledged(_ count: Int, _ what: String) async throws {
        try await withTimeout(.seconds(120), what) {
            while self.acknowledgedCount < count { try await Task.sleep(for: .milliseconds(20)) }
        }
    }
}
