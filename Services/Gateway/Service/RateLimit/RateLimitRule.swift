import Foundation

/// One rate limit: at most `burst` requests at once, refilled at `count` per `period`.
///
/// The arithmetic is the generic cell rate algorithm (GCRA): a key's whole state is one instant,
/// its *theoretical arrival time* (TAT). Each request moves the TAT `interval` (= period / count)
/// into the future; a request is refused while the TAT would run more than `burst` intervals ahead
/// of now, and the refusal says exactly when it would be allowed. This is a token bucket of
/// `burst` tokens refilled one per `interval`, without a timer and with one number per key.
///
/// Pure: time is passed in (a `Duration` since any fixed origin), so it is tested without a clock.
public struct RateLimitRule: Sendable, Equatable, CustomStringConvertible {
    /// Requests per `period` in the long run.
    public let count: Int
    public let period: Duration
    /// Requests allowed back to back by a key that has been quiet (the bucket's size).
    public let burst: Int

    public init(count: Int, period: Duration, burst: Int? = nil) {
        precondition(count > 0 && period > .zero && (burst ?? count) > 0, "a rate limit needs a positive count, period and burst")
        self.count = count
        self.period = period
        self.burst = burst ?? count
    }

    /// Time between two requests at the sustained rate.
    public var interval: Duration { period / count }

    /// The outcome of one request.
    public enum Decision: Sendable, Equatable {
        /// Let through; `tat` is the key's new state, `remaining` how many more could go at once.
        case allowed(tat: Duration, remaining: Int)
        /// Refused; allowed again `retryAfter` from now (always > 0). The state does not change.
        case limited(retryAfter: Duration)
    }

    /// Decides a request of `cost` units at `now` for a key whose state is `tat` (nil: never seen,
    /// or forgotten because idle, which is the same thing: a full bucket).
    public func decide(tat: Duration?, now: Duration, cost: Int = 1) -> Decision {
        let start = max(tat ?? now, now)
        let newTAT = start + interval * cost
        // The earliest instant at which newTAT is no more than `burst` intervals ahead.
        let allowedAt = newTAT - interval * burst
        if now < allowedAt { return .limited(retryAfter: allowedAt - now) }
        return .allowed(tat: newTAT, remaining: Int((now - allowedAt) / interval))
    }

    /// `count/period,burst=N` as it is written in the environment.
    public var description: String {
        let seconds = period.components.seconds
        let periodText = period == .seconds(seconds) ? "\(seconds)s" : "\(period.components.attoseconds / 1_000_000_000_000_000 + seconds * 1000)ms"
        return "\(count)/\(periodText),burst=\(burst)"
    }
}

extension RateLimitRule {
    /// A malformed rule, with what was wrong.
    public struct ParseError: Error, Sendable, Equatable {
        public let reason: String
    }

    /// The format of a rule, for error messages and the configuration reference.
    public static let format = "COUNT/PERIOD[,burst=N] (e.g. 10/60s,burst=5; PERIOD in s, m or h) or off"

    /// Parses `COUNT/PERIOD[,burst=N]` (`10/60s`, `30/1m,burst=10`, `1000/h`); `off`, `0` and
    /// `none` mean no limit (nil). Spaces around parts are ignored.
    public static func parse(_ text: String) throws(ParseError) -> RateLimitRule? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if ["off", "0", "none"].contains(trimmed) { return nil }
        let parts = trimmed.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let rate = parts[0].split(separator: "/", omittingEmptySubsequences: false)
        guard rate.count == 2 else { throw ParseError(reason: "expected COUNT/PERIOD, e.g. 10/60s") }
        guard let count = Int(rate[0].trimmingCharacters(in: .whitespaces)), (1...1_000_000).contains(count) else {
            throw ParseError(reason: "COUNT must be an integer in 1...1000000")
        }
        guard let period = parsePeriod(rate[1].trimmingCharacters(in: .whitespaces)) else {
            throw ParseError(reason: "PERIOD must be a positive number of s, m or h (60s, 1m, 1h) up to 24h")
        }
        var burst: Int?
        for option in parts.dropFirst() {
            let pair = option.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0] == "burst" else { throw ParseError(reason: "unknown option \"\(option)\" (only burst=N)") }
            guard burst == nil else { throw ParseError(reason: "burst is given twice") }
            guard let value = Int(pair[1]), (1...1_000_000).contains(value) else {
                throw ParseError(reason: "burst must be an integer in 1...1000000")
            }
            burst = value
        }
        return RateLimitRule(count: count, period: period, burst: burst)
    }

    /// `60s`, `1.5m`, `1h`, a bare unit (`m` = one minute) or a bare number of seconds.
    static func parsePeriod(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        var number = Substring(text)
        var scale = 1.0
        if let unit = units.first(where: { text.hasSuffix($0.0) && (Double(text.dropLast($0.0.count)) != nil || text.count == $0.0.count) }) {
            number = text.dropLast(unit.0.count)
            scale = unit.1
        }
        guard let value = number.isEmpty ? 1 : Double(number), value.isFinite, value > 0 else { return nil }
        let milliseconds = (value * scale * 1000).rounded()
        guard milliseconds >= 1, milliseconds <= 86_400_000 else { return nil }
        return .milliseconds(Int64(milliseconds))
    }
}
