import Synchronization

/// A value set from inside a `@Sendable` closure and read afterwards.
final class LockedBox<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    func set(_ newValue: Value) { value.withLock { $0 = newValue } }
    func get() -> Value? { value.withLock { $0 } }
}
