import Locks
import Logging

/// A bounded pool of ``PostgresConnection``s that reconnects after failures.
///
/// - At most `maxConnections` connections exist; connections open lazily, on demand.
/// - When all are busy, callers wait in FIFO order (suspended, never blocking a thread) until
///   one is released or `checkoutTimeout` passes, which throws a `.checkoutTimeout` error.
/// - A connection that failed (server restarted, connection lost) is closed and its slot is
///   reused for a new one. An idle connection is checked at checkout without a round trip
///   (`PQconsumeInput` + `PQstatus`), so the first query after a server restart gets a fresh
///   connection instead of an error.
/// - A connection returned in the middle of a transaction (the body issued `BEGIN` itself and
///   threw) is rolled back before reuse.
public final class PostgresPool: Sendable {
    public let configuration: PostgresConfiguration
    public let maxConnections: Int
    public let checkoutTimeout: Duration
    let logger: Logger
    let state: LockedValue<PoolState<PostgresConnection, PoolWaiter>>

    /// How long a checkout waits for a free connection unless told otherwise (and what a
    /// service's `DATABASE_CHECKOUT_TIMEOUT` defaults to): as long as a bus call's default
    /// deadline, so a request starved of connections fails `unavailable` about when its caller
    /// stops waiting, instead of holding its place in the queue long after.
    public static let defaultCheckoutTimeout: Duration = .seconds(5)

    /// Creates the pool; no connection is opened until the first checkout.
    public init(
        configuration: PostgresConfiguration, maxConnections: Int,
        checkoutTimeout: Duration = PostgresPool.defaultCheckoutTimeout, logger: Logger
    ) {
        precondition(maxConnections > 0, "a pool needs at least one connection")
        self.configuration = configuration
        self.maxConnections = maxConnections
        self.checkoutTimeout = checkoutTimeout
        self.logger = logger
        state = LockedValue(PoolState(limit: maxConnections))
    }

    /// Runs `body` synchronously on a checked-out connection's own thread: several statements
    /// with no suspension between them. The connection returns to the pool afterwards (or is
    /// replaced if it broke).
    @discardableResult
    public func withConnection<T: Sendable>(
        _ body: @Sendable (isolated PostgresConnection) throws -> T
    ) async throws -> T {
        var (connection, opened) = try await checkout()
        while true {
            guard let (outcome, reusable) = await connection.runLeased(body, checkingFirst: !opened) else {
                logger.info("postgres connection found dead at checkout; reconnecting")
                await connection.close()
                connection = try await reopen()  // the same slot
                opened = true
                continue
            }
            if !reusable { await connection.close() }
            checkin(connection, reusable: reusable)
            return try outcome.get()
        }
    }

    /// ``withConnection(_:)`` inside `BEGIN`/`COMMIT`; `ROLLBACK` when `body` throws.
    @discardableResult
    public func withTransaction<T: Sendable>(
        _ body: @Sendable (isolated PostgresConnection) throws -> T
    ) async throws -> T {
        try await withConnection { connection in try connection.transaction(body) }
    }

    /// How many connections are open (or opening), idle, and how many callers wait.
    public var statistics: (open: Int, idle: Int, waiting: Int) {
        state.withLock { ($0.open, $0.idle.count, $0.waiterCount) }
    }

    /// Closes idle connections and fails waiting callers; busy connections close when
    /// released. Later checkouts throw a `.closed` error.
    public func close() async {
        let (idle, waiters) = state.withLock { $0.close() }
        for waiter in waiters { waiter.continuation.resume(throwing: Self.closedError) }
        for connection in idle { await connection.close() }
    }

    /// A caller waiting for a connection or a slot.
    struct PoolWaiter {
        let continuation: CheckedContinuation<PoolGrant<PostgresConnection>, any Error>
    }

    static let closedError = PostgresError(
        kind: .closed, operation: "PostgresPool.checkout", message: "the pool is closed")
}

extension PostgresConnection {
    /// Runs a pool caller's body, then makes sure the connection can be reused: no broken
    /// connection, no open transaction. With `checkingFirst` (an idle connection from the pool),
    /// first checks it is still usable (``isUsable``) and returns `nil` without running `body` if
    /// not. One hop for all three: checking the connection in a hop of its own, then coming back
    /// to run the body, was two more thread switches on every use of the pool.
    func runLeased<T: Sendable>(_ body: @Sendable (isolated PostgresConnection) throws -> T, checkingFirst: Bool)
        -> (Result<T, any Error>, reusable: Bool)?
    {
        if checkingFirst, !isUsable { return nil }
        let outcome = Result { try body(self) }
        if case .failure(let error as PostgresError) = outcome, error.isConnectionFailure {
            return (outcome, false)
        }
        guard !isBroken else { return (outcome, false) }
        switch transactionStatus {
        case .idle:
            return (outcome, true)
        case .inTransaction, .failedTransaction:
            logger.info("postgres connection returned inside a transaction; rolling back")
            return (outcome, (try? query("ROLLBACK")) != nil)
        case .active, .unknown:
            return (outcome, false)
        }
    }
}
