import Locks

/// Runs one ``ReadinessCheck`` with a timeout, without ever waiting longer than the timeout for a
/// check that hangs, and without piling up copies of a hung check round after round.
final class CheckRunner: Sendable {
    let check: ReadinessCheck
    private let isRunning = LockedValue(false)

    init(_ check: ReadinessCheck) {
        self.check = check
    }

    func evaluate(timeout: Duration) async -> ReadinessStatus {
        let wasRunning = isRunning.withLock { running in
            defer { running = true }
            return running
        }
        if wasRunning { return .notReady("timed out: the previous run has not returned") }

        let outcome = FirstOutcome()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                outcome.install(continuation)
                // Unstructured, so a check that ignores cancellation cannot hold up the poller.
                let work = Task {
                    let status = await check.run()
                    isRunning.withLock { $0 = false }
                    outcome.resolve(status)
                }
                let timer = Task {
                    try await Task.sleep(for: timeout)
                    work.cancel()
                    outcome.resolve(.notReady("timed out after \(timeout)"))
                }
                outcome.onResolve { timer.cancel() }
            }
        } onCancel: {
            outcome.resolve(.notReady("cancelled"))
        }
    }
}

/// Delivers whichever of a check's result, its timeout or cancellation comes first, exactly once.
private final class FirstOutcome: Sendable {
    private struct State {
        var continuation: CheckedContinuation<ReadinessStatus, Never>?
        var early: ReadinessStatus?
        var cleanup: (@Sendable () -> Void)?
        var resolved = false
    }
    private let state = LockedValue(State())

    func install(_ continuation: CheckedContinuation<ReadinessStatus, Never>) {
        let early = state.withLock { state in
            if state.early == nil { state.continuation = continuation }
            return state.early
        }
        if let early { continuation.resume(returning: early) }
    }

    func onResolve(_ cleanup: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state in
            if !state.resolved { state.cleanup = cleanup }
            return state.resolved
        }
        if runNow { cleanup() }
    }

    func resolve(_ status: ReadinessStatus) {
        let (continuation, cleanup) = state.withLock { state -> (CheckedContinuation<ReadinessStatus, Never>?, (@Sendable () -> Void)?) in
            guard !state.resolved else { return (nil, nil) }
            state.resolved = true
            if state.continuation == nil { state.early = status }
            defer {
                state.continuation = nil
                state.cleanup = nil
            }
            return (state.continuation, state.cleanup)
        }
        continuation?.resume(returning: status)
        cleanup?()
    }
}
