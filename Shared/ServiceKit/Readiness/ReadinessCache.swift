import Locks

/// The latest ``ReadinessSnapshot``, shared between the async ``ReadinessPoller`` that writes it and
/// the health server's thread that reads it. Reading never waits on a check.
public final class ReadinessCache: Sendable {
    private let state = LockedValue(ReadinessSnapshot())

    public init() {}

    public var snapshot: ReadinessSnapshot {
        state.withLock { $0 }
    }

    /// Stores a finished round of checks. Ignored once shutting down, which is final.
    /// - Returns: the snapshot before the update, to log changes.
    @discardableResult
    func update(checks: [String: ReadinessStatus]) -> ReadinessSnapshot {
        state.withLock { snapshot in
            let previous = snapshot
            if snapshot.phase != .shuttingDown {
                snapshot = ReadinessSnapshot(phase: .running, checks: checks)
            }
            return previous
        }
    }

    /// Reports not ready from now on, so load balancers stop routing here while the service drains.
    public func markShuttingDown() {
        state.withLock { $0.phase = .shuttingDown }
    }
}
