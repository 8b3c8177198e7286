import Locks
import Testing

extension Tag {
    /// Tests that take more than a few seconds (loads, restarts, storms). Every suite of this
    /// target carries it; a developer skips them with `swift test --skip ReliabilityTests` (or runs
    /// them alone with `--filter ReliabilityTests`); `deploy/test` runs them all.
    @Tag static var long: Self
}

/// A flag one task sets and others poll.
final class Flag: Sendable {
    private let value = LockedValue(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// A value many tasks update (its `withLock` accepts only `Sendable` results).
final class Locked<Value: Sendable>: Sendable {
    private let value: LockedValue<Value>
    init(_ initial: Value) { value = LockedValue(initial) }
    func withLock<T: Sendable>(_ body: (inout sending Value) -> sending T) -> T { value.withLock(body) }
}
