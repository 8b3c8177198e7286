import Foundation
import Testing

@testable import Bus

/// The server's memory of idempotent requests (``IdempotencyCache``), without sockets.
@Suite struct IdempotencyCacheTests {
    typealias Key = IdempotencyCache.Key
    let waiter = IdempotencyCache.Waiter(route: [Data("peer".utf8)], requestId: UUID())
    let ok = IdempotencyCache.Outcome(payload: Array("{}".utf8), attachments: [], error: nil)

    func key(_ text: String, type: String = "audit.record", principal: Principal? = .user("u")) -> Key {
        Key(type: type, principal: principal, key: text)
    }

    @Test func runsOnceJoinsWhileRunningAndReplaysWhenDone() {
        let cache = IdempotencyCache(capacity: 10, ttl: .seconds(60))
        guard case .run = cache.admit(key: key("a"), waiter: waiter) else {
            Issue.record("first admission must run")
            return
        }
        guard case .joined = cache.admit(key: key("a"), waiter: waiter) else {
            Issue.record("a retry while running joins")
            return
        }
        guard case .joined = cache.admit(key: key("a"), waiter: waiter) else {
            Issue.record("and so does another")
            return
        }
        #expect(cache.complete(key("a"), ok).count == 2)
        guard case .replay(let outcome) = cache.admit(key: key("a"), waiter: waiter) else {
            Issue.record("done replays")
            return
        }
        #expect(outcome.payload == ok.payload)
    }

    @Test func keysAreScopedByTypeAndPrincipal() {
        let cache = IdempotencyCache(capacity: 10, ttl: .seconds(60))
        for scoped in [key("a"), key("a", type: "audit.other"), key("a", principal: .user("v")), key("a", principal: nil)] {
            guard case .run = cache.admit(key: scoped, waiter: waiter) else {
            Issue.record("\(scoped) is a new request")
            return
        }
        }
        #expect(key("a") == key("a") && key("a").hashValue == key("a").hashValue)
        #expect(key("a") != key("b"))
    }

    @Test func transientFailuresAreForgottenAndExpiredOutcomesRunAgain() {
        let cache = IdempotencyCache(capacity: 10, ttl: .seconds(60))
        let start = ContinuousClock.now
        _ = cache.admit(key: key("t"), waiter: waiter, now: start)
        _ = cache.complete(key("t"), .init(payload: nil, attachments: [], error: BusError(.unavailable, "read-only")), now: start)
        guard case .run = cache.admit(key: key("t"), waiter: waiter, now: start) else {
            Issue.record("transient: run again")
            return
        }
        _ = cache.complete(key("t"), ok, now: start)
        guard case .replay = cache.admit(key: key("t"), waiter: waiter, now: start + .seconds(59)) else {
            Issue.record("kept")
            return
        }
        guard case .run = cache.admit(key: key("t"), waiter: waiter, now: start + .seconds(61)) else {
            Issue.record("expired")
            return
        }
        #expect(cache.count == 1)
    }

    @Test func evictsTheOldestDoneKeysButNotRunningOnes() {
        let cache = IdempotencyCache(capacity: 3, ttl: .seconds(60))
        _ = cache.admit(key: key("running"), waiter: waiter)
        for name in ["d1", "d2", "d3", "d4", "d5"] {
            _ = cache.admit(key: key(name), waiter: waiter)
            _ = cache.complete(key(name), ok)
        }
        #expect(cache.count == 3)  // "running" (it counts too) and the two newest
        guard case .run = cache.admit(key: key("d1"), waiter: waiter) else {
            Issue.record("d1 was evicted")
            return
        }
        guard case .joined = cache.admit(key: key("running"), waiter: waiter) else {
            Issue.record("still running")
            return
        }
        guard case .replay = cache.admit(key: key("d5"), waiter: waiter) else {
            Issue.record("d5 is kept")
            return
        }
        // Once done and old again, the running one goes too.
        _ = cache.complete(key("running"), ok)
        for name in ["e1", "e2", "e3", "e4"] {
            _ = cache.admit(key: key(name), waiter: waiter)
            _ = cache.complete(key(name), ok)
        }
        guard case .run = cache.admit(key: key("running"), waiter: waiter) else {
            Issue.record("evicted once done")
            return
        }
    }

    @Test func theRingKeepsOrderAcrossGrowthAndWrapping() {
        var ring = KeyRing()
        var expected: [String] = []
        var next = 0
        for round in 0..<200 {
            for _ in 0..<(round % 7) {
                ring.append(key("k\(next)"))
                expected.append("k\(next)")
                next += 1
            }
            for _ in 0..<(round % 5) where !expected.isEmpty {
                #expect(ring.removeFirst()?.key == expected.removeFirst())
            }
            #expect(ring.count == expected.count)
        }
        while let first = ring.removeFirst() { #expect(first.key == expected.removeFirst()) }
        #expect(expected.isEmpty)
    }
}
