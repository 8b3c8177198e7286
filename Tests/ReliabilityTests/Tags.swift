import Synchronization
import Testing

extension Tag {
    /// Tests that take more than a few seconds (loads, restarts): `--skip-tags long`… is not a
    /// swift-testing option, so developers filter them out with `--skip "Long"` or run them alone
    /// with `--filter ReliabilityTests`; `deploy/test` runs them all.
    @Tag static var long: Self
}

/// Counts from many tasks at once.
final class Tally: Sendable {
    private let value = Synchronization.Mutex(0)
    func add(_ amount: Int = 1) { value.withLock { $0 += amount } }
    var count: Int { value.withLock { $0 } }
}
