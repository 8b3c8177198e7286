/// The pool's bookkeeping, guarded by the pool's `LockedValue` lock.
struct PoolState {
    /// Connections open or being opened (idle + busy + connecting).
    var open = 0
    var idle: [PostgresConnection] = []
    /// Callers waiting for a connection, oldest first.
    var waiters: [Waiter] = []
    var nextWaiterID = 0
    var closed = false

    /// What a caller gets: a connection to use, or permission to open one (a reserved slot).
    enum Grant: Sendable {
        case connection(PostgresConnection)
        case create
    }

    struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<Grant, any Error>
        var timeout: Task<Void, Never>?
    }

    /// A grant available right now, or `nil` when the caller must wait.
    mutating func take(limit: Int) throws -> Grant? {
        if closed { throw PostgresPool.closedError }
        if let connection = idle.popLast() { return .connection(connection) }
        if open < limit {
            open += 1
            return .create
        }
        return nil
    }

    mutating func removeWaiter(_ id: Int) -> Waiter? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index)
    }
}
