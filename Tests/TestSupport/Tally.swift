import Synchronization

/// A count many tasks add to (a handler's runs, calls that ended) and a test reads.
public final class Tally: Sendable {
    private let value = Atomic<Int>(0)
    public init() {}
    public func add(_ amount: Int = 1) { value.add(amount, ordering: .sequentiallyConsistent) }
    public var count: Int { value.load(ordering: .sequentiallyConsistent) }
}
