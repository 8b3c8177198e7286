import Foundation
import Testing

@testable import Bus
@testable import BusCore

/// The server's memory of idempotent requests (``IdempotencyCache``), without sockets.
@Suite struct IdempotencyCacheTests {
    typealias Key = IdempotencyCache.Key
    let waiter = IdempotencyCache.Waiter(route: [Data("peer".utf8)], requestId: UUID())
    let ok = IdempotencyCache.Outcome(payload: Array("{}".utf8), attachments: [], error: nil)

    /// The moment every call here happens at, unless a test moves time on.
    let start = ContinuousClock.now

    /// The digest of a body other than the one (7) every other admission here carries.
    let otherBody = 8

    func key(_ text: String, type: String = "audit.record", principal: Principal? = .user("u")) -> Key {
        Key(type: type, principal: principal, key: text)
    }

    @Test func runsOnceJoinsWhileRunningAndReplaysWhenDone() {
        var cache = IdempotencyCache(limits: .init(entries: 10, bytes: 1 << 20, age: .seconds(60)))
        guard case .run = cache.admit(key: key("a"), digest: 7, waiter: waiter, now: start) else {
            Issue.record("first admission must run")
            return
        }
        guard case .joined = cache.admit(key: key("a"), digest: 7, waiter: waiter, now: start) else {
            Issue.record("a retry while running joins")
            return
        }
        guard case .joined = cache.admit(key: key("a"), digest: 7, waiter: waiter, now: start) else {
            Issue.record("and so does another")
            return
        }
        #expect(cache.complete(key("a"), ok, now: start).count == 2)
        guard case .replay(let outcome) = cache.admit(key: key("a"), digest: 7, waiter: waiter, now: start) else {
            Issue.record("done replays")
            return
        }
        #expect(outcome.payload == ok.payload)
    }

    @Test func keysAreScopedByTypeAndPrincipal() {
        var cache = IdempotencyCache(limits: .init(entries: 10, bytes: 1 << 20, age: .seconds(60)))
        for scoped in [key("a"), key("a", type: "audit.other"), key("a", principal: .user("v")), key("a", principal: nil)] {
            guard case .run = cache.admit(key: scoped, digest: 7, waiter: waiter, now: start) else {
                Issue.record("\(scoped) is a new request")
                return
            }
        }
        #expect(key("a") == key("a") && key("a").hashValue == key("a").hashValue)
        #expect(key("a") != key("b"))
    }

    @Test func transientFailuresAreForgottenAndExpiredOutcomesRunAgain() {
        var cache = IdempotencyCache(limits: .init(entries: 10, bytes: 1 << 20, age: .seconds(60)))
        let start = ContinuousClock.now
        _ = cache.admit(key: key("t"), digest: 7, waiter: waiter, now: start)
        _ = cache.complete(key("t"), .init(payload: nil, attachments: [], error: BusError(.unavailable, "read-only")), now: start)
        guard case .run = cache.admit(key: key("t"), digest: 7, waiter: waiter, now: start) else {
            Issue.record("transient: run again")
            return
        }
        _ = cache.complete(key("t"), ok, now: start)
        guard case .replay = cache.admit(key: key("t"), digest: 7, waiter: waiter, now: start + .seconds(59)) else {
            Issue.record("kept")
            return
        }
        guard case .run = cache.admit(key: key("t"), digest: 7, waiter: waiter, now: start + .seconds(61)) else {
            Issue.record("expired")
            return
        }
        #expect(cache.count == 1)
    }

    @Test func evictsTheOldestDoneKeysButNotRunningOnes() {
        var cache = IdempotencyCache(limits: .init(entries: 3, bytes: 1 << 20, age: .seconds(60)))
        _ = cache.admit(key: key("running"), digest: 7, waiter: waiter, now: start)
        for name in ["d1", "d2", "d3", "d4", "d5"] {
            _ = cache.admit(key: key(name), digest: 7, waiter: waiter, now: start)
            _ = cache.complete(key(name), ok, now: start)
        }
        #expect(cache.count == 3)  // "running" (it counts too) and the two newest
        guard case .run = cache.admit(key: key("d1"), digest: 7, waiter: waiter, now: start) else {
            Issue.record("d1 was evicted")
            return
        }
        guard case .joined = cache.admit(key: key("running"), digest: 7, waiter: waiter, now: start) else {
            Issue.record("still running")
            return
        }
        guard case .replay = cache.admit(key: key("d5"), digest: 7, waiter: waiter, now: start) else {
            Issue.record("d5 is kept")
            return
        }
        // Once done and old again, the running one goes too.
        _ = cache.complete(key("running"), ok, now: start)
        for name in ["e1", "e2", "e3", "e4"] {
            _ = cache.admit(key: key(name), digest: 7, waiter: waiter, now: start)
            _ = cache.complete(key(name), ok, now: start)
        }
        guard case .run = cache.admit(key: key("running"), digest: 7, waiter: waiter, now: start) else {
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

    @Test func aReusedKeyWithAnotherBodyIsRefusedWhileRunningAndOnceDone() {
        var cache = IdempotencyCache(limits: .init(entries: 10, bytes: 1 << 20, age: .seconds(60)))
        _ = cache.admit(key: key("m"), digest: 7, waiter: waiter, now: start)
        guard case .mismatch = cache.admit(key: key("m"), digest: otherBody, waiter: waiter, now: start) else {
            Issue.record("another body under a running key is refused")
            return
        }
        #expect(cache.complete(key("m"), ok, now: start).isEmpty, "the refused one did not join")
        guard case .mismatch = cache.admit(key: key("m"), digest: otherBody, waiter: waiter, now: start) else {
            Issue.record("another body under a done key is refused")
            return
        }
        guard case .replay = cache.admit(key: key("m"), digest: 7, waiter: waiter, now: start) else {
            Issue.record("the same body still replays")
            return
        }
        // The same key from another caller is another request, whatever its body.
        guard case .run = cache.admit(key: key("m", principal: .user("v")), digest: otherBody, waiter: waiter, now: start) else {
            Issue.record("scoped by principal")
            return
        }
    }

    @Test func expiredOutcomesAreDroppedWithoutBeingAskedFor() {
        var cache = IdempotencyCache(limits: .init(entries: 1000, bytes: 1 << 20, age: .seconds(60)))
        let start = ContinuousClock.now
        for index in 0..<100 {
            _ = cache.admit(key: key("old\(index)"), digest: 7, waiter: waiter, now: start)
            _ = cache.complete(key("old\(index)"), ok, now: start)
        }
        #expect(cache.count == 100)
        #expect(cache.bytes == 100 * ok.cost)
        _ = cache.admit(key: key("new"), digest: 7, waiter: waiter, now: start + .seconds(61))
        #expect(cache.count == 1, "the expired ones went on the next admission")
        #expect(cache.bytes == 0)
    }

    @Test func boundedByBytesOfPayloadAndAttachments() {
        let big = IdempotencyCache.Outcome(payload: Array(repeating: 0x20, count: 10_000), attachments: [Data(count: 20_000)], error: nil)
        #expect(big.cost == 30_000 + IdempotencyCache.Outcome.entryOverhead)
        let bound = 4 * big.cost + 100
        var cache = IdempotencyCache(limits: .init(entries: 1000, bytes: bound, age: .seconds(60)))
        for index in 0..<10 {
            _ = cache.admit(key: key("b\(index)"), digest: 7, waiter: waiter, now: start)
            _ = cache.complete(key("b\(index)"), big, now: start)
            #expect(cache.bytes <= bound)
        }
        #expect(cache.count == 4, "only as many as fit in the bound")
        guard case .replay(let kept) = cache.admit(key: key("b9"), digest: 7, waiter: waiter, now: start) else {
            Issue.record("the newest is kept")
            return
        }
        #expect(kept.attachments == big.attachments)
        guard case .run = cache.admit(key: key("b0"), digest: 7, waiter: waiter, now: start) else {
            Issue.record("the oldest went")
            return
        }
        // One reply larger than the whole bound is not kept at all (its call still completes).
        let huge = IdempotencyCache.Outcome(payload: nil, attachments: [Data(count: bound + 1)], error: nil)
        _ = cache.admit(key: key("huge"), digest: 7, waiter: waiter, now: start)
        _ = cache.complete(key("huge"), huge, now: start)
        guard case .run = cache.admit(key: key("huge"), digest: 7, waiter: waiter, now: start) else {
            Issue.record("too large to keep")
            return
        }
        #expect(cache.bytes <= bound)
    }

    @Test func keyRuleIsOneForTheEdgeAndTheBus() {
        #expect(IdempotencyKeyRule.isValidClientKey(String(repeating: "k", count: 200)))
        #expect(!IdempotencyKeyRule.isValidClientKey(String(repeating: "k", count: 201)))
        #expect(!IdempotencyKeyRule.isValidClientKey(""))
        // The longest client key, scoped by the edge, is still a valid bus key.
        let scoped = "http:\(UUID().uuidString.lowercased()):" + String(repeating: "k", count: 200) + ":999"
        #expect(IdempotencyKeyRule.isValidBusKey(scoped))
        #expect(!IdempotencyKeyRule.isValidBusKey(String(repeating: "k", count: IdempotencyKeyRule.busKeyMaximumBytes + 1)))
        #expect(
            IdempotencyKeyRule.digest(payload: Data("{\"a\":1}".utf8), attachments: [])
                != IdempotencyKeyRule.digest(payload: Data("{\"a\":2}".utf8), attachments: []))
        #expect(
            IdempotencyKeyRule.digest(payload: Data("x".utf8), attachments: [Data("y".utf8)])
                != IdempotencyKeyRule.digest(payload: Data("xy".utf8), attachments: []))
    }
}
