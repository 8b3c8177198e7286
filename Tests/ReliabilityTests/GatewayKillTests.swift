import Bus
import Contracts
import Crypto
import Foundation
import TestSupport
import Testing

extension ReliabilityTests {
    /// kill -9 of the HTTP gateway while apps accept the terms through it: what an app saw
    /// acknowledged (a 2xx) is in Audit, and apps retrying every request with its same
    /// `Idempotency-Key` through the restarted gateway record each acceptance exactly once.
    @Suite("Reliability: kill -9 of the gateway")
    struct GatewayKillTests {
        static let users = 100
        static let requestsPerUser = 4
        static let killAfter = 100

        @Test("Gateway SIGKILLed under accept-tos load: acknowledged acceptances all in Audit; retries with the same Idempotency-Key add none")
        func gatewayKilledUnderLoad() async throws {
            try await Stack.run(gateway: true) { stack in
                let terms = try await stack.currentTerms()
                var users: [UUID] = []
                for _ in 0..<Self.users { users.append(try await stack.signUp(terms: terms)) }
                // Request i: user i / requestsPerUser, its own key (four separate acceptances per user).
                let total = Self.users * Self.requestsPerUser
                let requests = (0..<total).map { (user: users[$0 / Self.requestsPerUser], key: "gateway-kill-\($0)") }
                try await stack.waitForChained()
                let before = try await stack.count("SELECT count(*)::bigint FROM audit.records")
                #expect(before == Self.users, "\(before) sign-up records for \(Self.users) users")

                let client = GatewayHTTP(port: try stack.gatewayPort(), connections: 48)
                let acknowledged = Locked<Set<Int>>([])
                let refusals = Locked<[Int: Int]>([:])
                let load = Task {
                    try? await forEachConcurrently(total, width: 48) { index in
                        do {
                            let status = try await client.acceptTerms(user: requests[index].user, version: terms, key: requests[index].key)
                            if (200..<300).contains(status) {
                                acknowledged.withLock { _ = $0.insert(index) }
                            } else {
                                refusals.withLock { $0[status, default: 0] += 1 }
                            }
                        } catch {
                            refusals.withLock { $0[0, default: 0] += 1 }  // no response: refused or cut
                        }
                    }
                }
                try await withTimeout(.seconds(120), "the first \(Self.killAfter) acknowledgements") {
                    while acknowledged.withLock({ $0.count }) < Self.killAfter { try await Task.sleep(for: .milliseconds(2)) }
                }
                stack.kill(Stack.gatewayName)
                await load.value
                client.close()
                let startedAt = ContinuousClock.now
                try await stack.start(Stack.gatewayName)
                let restart = ContinuousClock.now - startedAt

                let acked = acknowledged.withLock { $0 }
                let storedBefore = try await Self.storedKeys(stack)
                let lost = acked.filter { !storedBefore.contains(Self.hash(requests[$0].user, requests[$0].key)) }
                // Cut off after Audit committed but before the app heard back: the retries must not add these again.
                let committedUnacknowledged = (0..<total).filter {
                    !acked.contains($0) && storedBefore.contains(Self.hash(requests[$0].user, requests[$0].key))
                }.count
                #expect(acked.count >= Self.killAfter && acked.count < total, "acknowledged \(acked.count) of \(total)")
                #expect(lost.isEmpty, "\(lost.count) acknowledged acceptances are missing from Audit")

                // Every app retries every request with its key through the restarted gateway (an
                // app retries a 503/504 or a refused connection too, up to 5 times).
                let retryClient = GatewayHTTP(port: try stack.gatewayPort(), connections: 32)
                let attempts = Tally()
                let unanswered = Tally()
                try await forEachConcurrently(total, width: 32) { index in
                    for attempt in 1...5 {
                        attempts.add()
                        let status = try? await retryClient.acceptTerms(user: requests[index].user, version: terms, key: requests[index].key)
                        if let status, (200..<300).contains(status) { return }
                        if let status, status != 503, status != 504 {
                            Issue.record("retry of request \(index) answered \(status)")
                            break
                        }
                        if attempt < 5 { try await Task.sleep(for: .milliseconds(200)) }
                    }
                    unanswered.add()
                }
                retryClient.close()
                #expect(unanswered.count == 0, "\(unanswered.count) requests never acknowledged after the restart")

                // Exactly one record per key, and each user's history holds its sign-up and its four acceptances.
                try await stack.waitForChained()
                let perKey = try await stack.withDatabase { db in
                    try db.query("SELECT idempotency_hash, count(*)::bigint FROM audit.records WHERE idempotency_hash IS NOT NULL GROUP BY 1")
                        .map { (try $0.decode(String.self, column: 0), try $0.decode(Int.self, column: 1)) }
                }
                let counts = Dictionary(perKey, uniquingKeysWith: +)
                let missing = requests.filter { counts[Self.hash($0.user, $0.key)] == nil }.count
                let duplicates = requests.map { max(0, (counts[Self.hash($0.user, $0.key)] ?? 0) - 1) }.reduce(0, +)
                let rows = try await stack.count("SELECT count(*)::bigint FROM audit.records")
                #expect(missing == 0, "\(missing) keys have no record")
                #expect(duplicates == 0, "\(duplicates) extra records for retried keys")
                #expect(rows == Self.users + total, "\(rows) records; expected \(Self.users) sign-ups + \(total) acceptances")
                var shortHistories = 0
                for user in users {
                    let history = try await stack.audit.call(
                        AuditHistory.self, .init(userId: user, documentType: .termsOfService, limit: 100),
                        principal: .user(user.uuidString.lowercased()))
                    if history.records.count != 1 + Self.requestsPerUser { shortHistories += 1 }
                }
                #expect(shortHistories == 0, "\(shortHistories) users' histories do not hold 1 sign-up + \(Self.requestsPerUser) acceptances")
                let before503 = refusals.withLock { $0 }
                print(
                    "RELIABILITY gateway-kill requests=\(total) users=\(Self.users) acknowledged=\(acked.count) lost=\(lost.count) committed-unacknowledged=\(committedUnacknowledged) no-response=\(before503[0] ?? 0) other-statuses=\(before503.filter { $0.key != 0 }) retry-attempts=\(attempts.count) records-for-keys=\(total - missing) duplicates=\(duplicates) restart-to-ready=\(restart)"
                )
            }
        }

        /// Audit's stored idempotency hashes.
        static func storedKeys(_ stack: Stack) async throws -> Set<String> {
            try await stack.withDatabase { db in
                Set(
                    try db.query("SELECT idempotency_hash FROM audit.records WHERE idempotency_hash IS NOT NULL").map {
                        try $0.decode(String.self, column: 0)
                    })
            }
        }

        /// The hash Audit stores for one seed acceptance: the gateway scopes the header's key to the
        /// user (`http:<user>:<key>`, IdempotencyKeys.swift), Accounts prefixes its method
        /// (`accounts.accept:`, TermsActions.swift), Audit hashes it with the user
        /// (`AuditHandlers.idempotencyHash`). A wrong formula fails the test (no key found), never passes it.
        static func hash(_ user: UUID, _ key: String) -> String {
            let id = user.uuidString.lowercased()
            let scoped = "accounts.accept:http:\(id):\(key)"
            return SHA256.hash(data: Array((id + "\n" + scoped).utf8)).map { String(format: "%02x", $0) }.joined()
        }
    }
}
