/// How long a loop waits before it tries again, as a value: the first wait, how it grows with
/// each failure (or each poll that found nothing yet), and its ceiling. One type for every retry
/// and poll in the product, so each policy is its three numbers, written where it is used, and
/// the arithmetic (and its overflow guard) is written once.
public struct Backoff: Sendable, Equatable {
    /// How the wait grows from one try to the next.
    public enum Growth: Sendable, Equatable {
        /// `first`, `2 × first`, `4 × first`, …: for waiting out an outage of unknown length.
        case doubling
        /// `first`, `2 × first`, `3 × first`, …: for short, expected conflicts.
        case linear
    }

    public var first: Duration
    public var maximum: Duration
    public var growth: Growth

    public init(first: Duration, maximum: Duration, growth: Growth = .doubling) {
        precondition(first > .zero && maximum >= first, "a backoff waits at least its first wait and at most its maximum")
        self.first = first
        self.maximum = maximum
        self.growth = growth
    }

    /// The wait after the `failures`-th failure in a row (the first failure waits `first`).
    public func delay(after failures: Int) -> Duration {
        let step = max(failures, 1)
        let grown: Duration
        switch growth {
        // Capped at 2^30 steps so the multiplication cannot overflow; the ceiling applies long before.
        case .doubling: grown = first * (1 << min(step - 1, 30))
        case .linear: grown = first * min(step, 1 << 30)
        }
        return min(grown, maximum)
    }
}
