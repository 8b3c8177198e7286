/// The state of one rate-limit rule for every key it has seen, with bounded memory.
///
/// A key's state is its theoretical arrival time (``RateLimitRule``). A key whose TAT has passed
/// has a full bucket again, which is exactly what an absent key means, so forgetting it changes no
/// decision: such idle keys are swept every `sweepInterval`. Under a flood of new keys (an
/// attacker rotating addresses) the table never holds more than `maxKeys`: when it is full, idle
/// keys go first, and if that frees less than a tenth, the keys closest to idle (smallest TAT) are
/// dropped until a tenth is free. Dropping a busy key forgives it its debt (it may burst again),
/// which is the price of a bound; the clean-up is amortised over the next tenth of `maxKeys`
/// insertions, so a flood costs O(log n) per request, not a scan each.
///
/// A value type with no clock and no lock: ``RateLimiter`` adds both.
public struct RateLimitTable: Sendable {
    public let rule: RateLimitRule
    public let maxKeys: Int
    public let sweepInterval: Duration
    private(set) var arrivals: [String: Duration] = [:]
    private var lastSweep: Duration?

    public init(rule: RateLimitRule, maxKeys: Int, sweepInterval: Duration = .seconds(60)) {
        precondition(maxKeys >= 10, "a rate-limit table needs room for at least 10 keys")
        self.rule = rule
        self.maxKeys = maxKeys
        self.sweepInterval = sweepInterval
    }

    /// How many keys are tracked now.
    public var count: Int { arrivals.count }

    /// Decides one request of `key` at `now`, and records it when allowed.
    public mutating func take(_ key: String, now: Duration, cost: Int = 1) -> RateLimitRule.Decision {
        if let last = lastSweep {
            if now - last >= sweepInterval { sweepIdle(now: now) }
        } else {
            lastSweep = now
        }
        let decision = rule.decide(tat: arrivals[key], now: now, cost: cost)
        if case .allowed(let tat, _) = decision {
            if arrivals[key] == nil, arrivals.count >= maxKeys { makeRoom(now: now) }
            arrivals[key] = tat
        }
        return decision
    }

    /// Forgets every key whose bucket is full again.
    mutating func sweepIdle(now: Duration) {
        arrivals = arrivals.filter { $0.value > now }
        lastSweep = now
    }

    /// Frees at least a tenth of `maxKeys`: idle keys first, then those nearest to idle.
    mutating func makeRoom(now: Duration) {
        sweepIdle(now: now)
        let target = maxKeys - maxKeys / 10
        guard arrivals.count > target else { return }
        let drop = arrivals.sorted { $0.value < $1.value }.prefix(arrivals.count - target)
        for (key, _) in drop { arrivals.removeValue(forKey: key) }
    }
}
