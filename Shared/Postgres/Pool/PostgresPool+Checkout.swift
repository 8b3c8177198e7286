import Logging

extension PostgresPool {
    /// A healthy connection for exclusive use; give it back with ``checkin(_:reusable:)``.
    func checkout() async throws -> PostgresConnection {
        let deadline = ContinuousClock.now + checkoutTimeout
        var grant = try state.withLock { try $0.take(limit: maxConnections) }
        if grant == nil { grant = try await waitForGrant(until: deadline) }
        guard var grant else { preconditionFailure("waitForGrant returns a grant or throws") }
        while true {
            switch grant {
            case .connection(let connection):
                if await connection.isUsable { return connection }
                logger.info("postgres connection found dead at checkout; reconnecting")
                await connection.close()
                grant = .create  // keep the slot, open a replacement in it
            case .create:
                do {
                    return try await PostgresConnection.connect(configuration: configuration, logger: logger)
                } catch {
                    freeSlot()
                    throw error
                }
            }
        }
    }

    /// Returns a connection after use. A connection that is not `reusable` (already closed by
    /// the caller) frees its slot; either goes to the oldest waiter first.
    func checkin(_ connection: PostgresConnection, reusable: Bool) {
        guard reusable else { return freeSlot() }
        let (waiter, closeIt) = state.withLock { state -> (PoolState.Waiter?, Bool) in
            if state.closed {
                state.open -= 1
                return (nil, true)
            }
            if !state.waiters.isEmpty { return (state.waiters.removeFirst(), false) }
            state.idle.append(connection)
            return (nil, false)
        }
        if let waiter {
            waiter.timeout?.cancel()
            waiter.continuation.resume(returning: .connection(connection))
        } else if closeIt {
            Task { await connection.close() }
        }
    }

    /// Gives up a slot: the oldest waiter may open a connection in it.
    func freeSlot() {
        let waiter = state.withLock { state -> PoolState.Waiter? in
            guard !state.closed, !state.waiters.isEmpty else {
                state.open -= 1
                return nil
            }
            return state.waiters.removeFirst()  // the slot passes to it: `open` is unchanged
        }
        waiter?.timeout?.cancel()
        waiter?.continuation.resume(returning: .create)
    }

    /// Queues the caller until a connection or slot frees up, the deadline passes (a
    /// `.checkoutTimeout` error) or the task is cancelled (`CancellationError`).
    private func waitForGrant(until deadline: ContinuousClock.Instant) async throws -> PoolState.Grant {
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> Result<PoolState.Grant, any Error>? in
                    do {
                        if let grant = try state.take(limit: maxConnections) { return .success(grant) }
                    } catch {
                        return .failure(error)
                    }
                    state.waiters.append(PoolState.Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let ready { return continuation.resume(with: ready) }
                if Task.isCancelled { return fail(waiter: id, with: CancellationError()) }
                let timeout = Task { [self] in
                    guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
                    fail(waiter: id, with: timeoutError())
                }
                let registered = state.withLock { state -> Bool in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return false }
                    state.waiters[index].timeout = timeout
                    return true
                }
                if !registered { timeout.cancel() }
            }
        } onCancel: {
            fail(waiter: id, with: CancellationError())
        }
    }

    private func fail(waiter id: Int, with error: any Error) {
        guard let waiter = state.withLock({ $0.removeWaiter(id) }) else { return }
        waiter.timeout?.cancel()
        waiter.continuation.resume(throwing: error)
    }

    private func timeoutError() -> PostgresError {
        logger.warning("postgres pool checkout timed out", metadata: [
            "max_connections": "\(maxConnections)", "timeout": "\(checkoutTimeout)",
        ])
        return PostgresError(
            kind: .checkoutTimeout, operation: "PostgresPool.checkout",
            message: "no connection became free within \(checkoutTimeout) "
                + "(all \(maxConnections) in use)")
    }
}
