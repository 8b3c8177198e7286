import Locks

/// Mutable state shared with `@Sendable` closures and concurrent tasks in tests.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: LockedValue<Value>
    init(_ value: Value) { mutex = LockedValue(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
    var value: Value { mutex.withLock { $0 } }
}
