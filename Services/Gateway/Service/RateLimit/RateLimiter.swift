import Locks
import Metrics

/// One named rate-limit rule, shared by every request of the gateway: a ``RateLimitTable`` behind
/// a `LockedValue` (held for a dictionary look-up, never across an `await`, so the cooperative pool is
/// never blocked on it) and a clock. Refusals are counted in `gateway_rate_limited_total{rule}`.
public final class RateLimiter: Sendable {
    /// The rule's name in metrics and logs (`sign_in_per_ip`).
    public let name: String
    public let rule: RateLimitRule
    private let table: LockedValue<RateLimitTable>
    private let clock: @Sendable () -> Duration
    private let refusals: Counter

    /// - Parameter clock: time since any fixed origin; by default a monotonic clock.
    public init(name: String, rule: RateLimitRule, maxKeys: Int, clock: (@Sendable () -> Duration)? = nil) {
        self.name = name
        self.rule = rule
        table = LockedValue(RateLimitTable(rule: rule, maxKeys: maxKeys))
        if let clock {
            self.clock = clock
        } else {
            let origin = ContinuousClock.now
            self.clock = { ContinuousClock.now - origin }
        }
        refusals = Counter(label: "gateway_rate_limited_total", dimensions: [("rule", name)])
    }

    /// Takes `cost` from `key`'s budget, or throws ``RateLimited`` (and takes nothing).
    public func take(_ key: String, cost: Int = 1) throws(RateLimited) {
        let now = clock()
        let decision = table.withLock { $0.take(key, now: now, cost: cost) }
        if case .limited(let retryAfter) = decision {
            refusals.increment()
            throw RateLimited(rule: name, retryAfter: retryAfter)
        }
    }

    /// Keys tracked now (for tests and the memory bound).
    public var trackedKeys: Int { table.withLock { $0.count } }
}

/// A request refused by a rate limit: HTTP 429 with `Retry-After`.
public struct RateLimited: Error, Sendable, Equatable {
    public let rule: String
    /// When the same request would be allowed, from the limiter's state.
    public let retryAfter: Duration

    /// `Retry-After` in whole seconds: rounded up, at least 1 (waiting that long always suffices).
    public var retryAfterSeconds: Int {
        let (seconds, attoseconds) = retryAfter.components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }
}
