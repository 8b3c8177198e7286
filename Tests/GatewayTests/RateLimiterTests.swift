import Locks
import ServiceKit
import Testing

@testable import GatewayService

/// The rate limiter as a pure state machine (time passed in), its memory bound, its settings.
struct RateLimiterTests {
    @Test func rulesParseAndRefuseWithAReason() throws {
        let rule = try #require(try RateLimitRule.parse("10/60s,burst=5"))
        #expect(rule.count == 10 && rule.period == .seconds(60) && rule.burst == 5 && rule.interval == .seconds(6))
        #expect(try RateLimitRule.parse(" 30 / 1m ")?.burst == 30)
        #expect(try RateLimitRule.parse("1000/h")?.period == .seconds(3600))
        #expect(try RateLimitRule.parse("5/500ms")?.interval == .milliseconds(100))
        #expect(try RateLimitRule.parse("10/60s,burst=5")?.description == "10/60s,burst=5")
        for off in ["off", "OFF", "0", "none"] { #expect(try RateLimitRule.parse(off) == nil) }
        let refusals: [(String, String)] = [
            ("10", "COUNT/PERIOD"), ("ten/60s", "COUNT must"), ("0/60s", "COUNT must"), ("10/0s", "PERIOD must"),
            ("10/60x", "PERIOD must"), ("10/48h", "PERIOD must"), ("10/60s,burst=0", "burst must"),
            ("10/60s,bursts=3", "unknown option"), ("10/60s,burst=2,burst=3", "twice"),
        ]
        for (text, reason) in refusals {
            #expect(throws: RateLimitRule.ParseError.self) { try RateLimitRule.parse(text) }
            do { _ = try RateLimitRule.parse(text) } catch { #expect(error.reason.contains(reason), "\(text): \(error.reason)") }
        }
    }

    @Test func gcraAllowsTheBurstThenOneEachIntervalAndSaysWhen() {
        let rule = RateLimitRule(count: 10, period: .seconds(10), burst: 3)
        var tat: Duration?
        let now = Duration.seconds(100)
        for expectedRemaining in [2, 1, 0] {
            guard case .allowed(let next, let remaining) = rule.decide(tat: tat, now: now) else {
                Issue.record("refused within the burst")
                return
            }
            #expect(remaining == expectedRemaining)
            tat = next
        }
        // The fourth waits exactly one interval, and the state does not move while refused.
        #expect(rule.decide(tat: tat, now: now) == .limited(retryAfter: .seconds(1)))
        #expect(rule.decide(tat: tat, now: now + .milliseconds(400)) == .limited(retryAfter: .milliseconds(600)))
        guard case .allowed(let after, 0) = rule.decide(tat: tat, now: now + .seconds(1)) else {
            Issue.record("not allowed after retryAfter")
            return
        }
        #expect(rule.decide(tat: after, now: now + .seconds(1)) == .limited(retryAfter: .seconds(1)))
        // A quiet key is back to a full burst; a cost of 2 takes two.
        guard case .allowed(_, 1) = rule.decide(tat: after, now: now + .seconds(60), cost: 2) else {
            Issue.record("cost 2 not taken")
            return
        }
        #expect(rule.decide(tat: nil, now: now, cost: 4) == .limited(retryAfter: .seconds(1)))
    }

    @Test func retryAfterIsWholeSecondsRoundedUpAndAtLeastOne() {
        #expect(RateLimited(rule: "r", retryAfter: .milliseconds(1)).retryAfterSeconds == 1)
        #expect(RateLimited(rule: "r", retryAfter: .seconds(1)).retryAfterSeconds == 1)
        #expect(RateLimited(rule: "r", retryAfter: .milliseconds(1001)).retryAfterSeconds == 2)
        #expect(RateLimited(rule: "r", retryAfter: .seconds(30)).retryAfterSeconds == 30)
    }

    @Test func idleKeysAreForgottenWithoutChangingAnyDecision() {
        var table = RateLimitTable(rule: RateLimitRule(count: 1, period: .seconds(10), burst: 2), maxKeys: 1000, sweepInterval: .seconds(60))
        for index in 0..<100 { _ = table.take("idle-\(index)", now: .seconds(0)) }
        _ = table.take("busy", now: .seconds(50))
        _ = table.take("busy", now: .seconds(50))
        #expect(table.count == 101)
        // At 61 s the sweep runs: the idle keys' buckets are full again, the busy one's is not.
        #expect(table.take("busy", now: .seconds(61)) == .allowed(tat: .seconds(80), remaining: 0))
        #expect(table.count == 1)
        #expect(table.take("busy", now: .seconds(61)) == .limited(retryAfter: .seconds(9)))
    }

    @Test func rotatingKeysCannotGrowMemoryPastTheCap() {
        var table = RateLimitTable(rule: RateLimitRule(count: 5, period: .seconds(60)), maxKeys: 1000)
        // A key that keeps its limiter busy, then a flood of 20,000 one-shot keys (an attacker
        // rotating addresses) within the same second.
        for _ in 0..<5 { _ = table.take("victim-of-abuse", now: .seconds(1)) }
        var largest = 0
        for index in 0..<20_000 {
            _ = table.take("rotating-\(index)", now: .seconds(1) + .microseconds(index))
            largest = max(largest, table.count)
        }
        #expect(largest == 1000)
        // The most indebted key survives the evictions (the nearest-to-idle go first): still limited.
        guard case .limited = table.take("victim-of-abuse", now: .seconds(2)) else {
            Issue.record("the busiest key was evicted")
            return
        }
    }

    @Test func limiterUsesItsInjectedClockAndCountsRefusals() throws {
        let now = LockedValue(Duration.seconds(0))
        let limiter = RateLimiter(
            name: "test_rule", rule: RateLimitRule(count: 1, period: .seconds(2), burst: 1), maxKeys: 100, clock: { now.withLock { $0 } })
        try limiter.take("a")
        #expect(throws: RateLimited(rule: "test_rule", retryAfter: .seconds(2))) { try limiter.take("a") }
        try limiter.take("b")
        now.withLock { $0 = .milliseconds(1500) }
        #expect(throws: RateLimited(rule: "test_rule", retryAfter: .milliseconds(500))) { try limiter.take("a") }
        now.withLock { $0 = .seconds(2) }
        try limiter.take("a")
        #expect(limiter.trackedKeys == 2)
    }

    @Test func addressKeysGroupIPv6By64() {
        #expect(RateLimits.addressKey("203.0.113.9") == "203.0.113.9")
        #expect(RateLimits.addressKey("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64")
        #expect(RateLimits.addressKey("2001:db8:1:2:bbbb::7") == RateLimits.addressKey("2001:db8:1:2:aaaa::1"))
        #expect(RateLimits.addressKey("::ffff:192.0.2.1") == "192.0.2.1")
        #expect(RateLimits.addressKey(nil) == "unknown")
    }

    @Test func settingsHaveDefaultsAndClearRefusals() throws {
        let defaults = try GatewaySettings(environment: EnvironmentReader([:])).rateLimits
        #expect(defaults.signInPerIP == RateLimitRule(count: 60, period: .seconds(60), burst: 30))
        #expect(defaults.acceptPerUser == RateLimitRule(count: 20, period: .seconds(60), burst: 10))
        #expect(defaults.exportPerUser == RateLimitRule(count: 6, period: .seconds(3600), burst: 2))
        #expect(defaults.maxKeys == 100_000)
        let off = try GatewaySettings(
            environment: EnvironmentReader(["GATEWAY_RATE_LIMIT_ACCEPT_PER_IP": "off", "GATEWAY_RATE_LIMIT_SIGN_IN_PER_USER": "0"])
        ).rateLimits
        #expect(off.acceptPerIP == nil && off.signInPerUser == nil && off.signInPerIP != nil)
        do {
            _ = try GatewaySettings(environment: EnvironmentReader(["GATEWAY_RATE_LIMIT_ACCEPT_PER_USER": "20 per minute"]))
            Issue.record("a malformed rule was accepted")
        } catch let error as ConfigurationError {
            #expect(error.variable == "GATEWAY_RATE_LIMIT_ACCEPT_PER_USER")
            #expect("\(error)".contains("\"20 per minute\"") && "\(error)".contains("COUNT/PERIOD"), "\(error)")
        }
        #expect(throws: ConfigurationError.self) { try GatewaySettings(environment: EnvironmentReader(["GATEWAY_RATE_LIMIT_MAX_KEYS": "5"])) }
    }
}
