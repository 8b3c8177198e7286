import Logging

extension PostgresPool {
    /// A connection for exclusive use, and whether it was opened just now; give it back with
    /// ``checkin(_:reusable:)``. An idle connection handed out here is not yet checked: the caller
    /// checks it on its thread with its first use (``runLeased(_:checkingFirst:)``), one hop for
    /// both, and replaces a dead one with ``reopen()``.
    func checkout() async throws -> (connection: PostgresConnection, opened: Bool) {
        let deadline = ContinuousClock.now + checkoutTimeout
        var grant: PoolGrant<PostgresConnection>?
        do { grant = try state.withLock { try $0.take() } } catch { throw Self.closedError }
        if grant == nil { grant = try await waitForGrant(until: deadline) }
        switch grant {
        case .connection(let connection): return (connection, false)
        case .create: return (try await reopen(), true)
        case nil: preconditionFailure("waitForGrant returns a grant or throws")
        }
    }

    /// Opens a connection in a slot the caller holds (a new one, or one whose connection was found
    /// dead); frees the slot if it cannot.
    func reopen() async throws -> PostgresConnection {
        do {
            return try await PostgresConnection.connect(configuration: configuration, logger: logger)
        } catch {
            freeSlot()
            throw error
        }
    }

    /// Returns a connection after use. A connection that is not `reusable` (already closed by
    /// the caller) frees its slot; either goes to the oldest waiter first.
    func checkin(_ connection: PostgresConnection, reusable: Bool) {
        guard reusable else { return freeSlot() }
        switch state.withLock({ $0.checkin(connection) }) {
        case .handOver(let waiter):
            waiter.continuation.resume(returning: .connection(connection))
        case .keptIdle:
            break
        case .close:
            Task { await connection.close() }
        }
    }

    /// Gives up a slot: the oldest waiter may open a connection in it.
    func freeSlot() {
        guard case .handOver(let waiter) = state.withLock({ $0.freeSlot() }) else { return }
        waiter.continuation.resume(returning: .create)
    }

    /// Queues the caller until a connection or slot frees up, the deadline passes (a
    /// `.checkoutTimeout` error) or the task is cancelled (`CancellationError`).
    private func waitForGrant(until deadline: ContinuousClock.Instant) async throws -> PoolGrant<PostgresConnection> {
        let id = state.withLock { $0.makeWaiterID() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let admission = state.withLock { state -> Result<PoolState<PostgresConnection, PoolWaiter>.Admission, any Error> in
                    do {
                        return .success(try state.takeOrWait(id: id, until: deadline) { PoolWaiter(continuation: continuation) })
                    } catch {
                        return .failure(Self.closedError)
                    }
                }
                switch admission {
                case .success(.granted(let grant)): continuation.resume(returning: grant)
                case .failure(let error): continuation.resume(throwing: error)
                case .success(.queued(let armTimer)):
                    if let armTimer { arm(at: armTimer) }
                    if Task.isCancelled { fail(waiter: id, with: CancellationError()) }
                }
            }
        } onCancel: {
            fail(waiter: id, with: CancellationError())
        }
    }

    /// The pool's one checkout timer: fires at `instant`, fails the waiters whose deadline passed,
    /// and arms itself again for the next one (``PoolState/expire(now:)``).
    private func arm(at instant: ContinuousClock.Instant) {
        Task { [self] in
            try? await Task.sleep(until: instant, clock: .continuous)
            let (expired, next) = state.withLock { $0.expire(now: .now) }
            if let next { arm(at: next) }
            if expired.isEmpty { return }
            let error = timeoutError()
            for waiter in expired { waiter.continuation.resume(throwing: error) }
        }
    }

    private func fail(waiter id: Int, with error: any Error) {
        guard let waiter = state.withLock({ $0.removeWaiter(id) }) else { return }
        waiter.continuation.resume(throwing: error)
    }

    private func timeoutError() -> PostgresError {
        logger.debug(
            "postgres pool checkout timed out",
            metadata: [
                "max_connections": "\(maxConnections)", "timeout": "\(checkoutTimeout)",
            ])
        return PostgresError(
            kind: .checkoutTimeout, operation: "PostgresPool.checkout",
            message: "no connection became free within \(checkoutTimeout) "
                + "(all \(maxConnections) in use)")
    }
}
