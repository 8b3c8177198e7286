import Foundation
import Locks

/// Calls waiting for their reply, by request id, each with the instant it gives up.
/// Replies arrive on the socket's thread; the expiry sweep runs there too.
final class PendingCalls: Sendable {
    typealias Reply = (envelope: Envelope, attachments: [Data])
    private struct Call {
        var continuation: CheckedContinuation<Reply, any Error>
        var expiresAt: ContinuousClock.Instant
        var type: String
    }
    private struct State {
        var calls: [UUID: Call] = [:]
        /// No call expires before this instant. Kept so that the sweep, which runs on every wake-up
        /// of the socket thread, scans the calls only when one may be due: O(1) per reply otherwise.
        /// A completed call may leave it too early; that costs one scan, which recomputes it.
        var earliestExpiry: ContinuousClock.Instant?
    }
    private let state = LockedValue(State())

    func add(_ id: UUID, type: String, expiresAt: ContinuousClock.Instant, _ continuation: CheckedContinuation<Reply, any Error>) {
        state.withLock { state in
            state.calls[id] = Call(continuation: continuation, expiresAt: expiresAt, type: type)
            if state.earliestExpiry.map({ expiresAt < $0 }) ?? true { state.earliestExpiry = expiresAt }
        }
    }

    /// Resumes the call `id` with its reply; `false` when nobody waits for it any more (late reply).
    func complete(_ id: UUID, with reply: Reply) -> Bool {
        guard let call = state.withLock({ $0.calls.removeValue(forKey: id) }) else { return false }
        call.continuation.resume(returning: reply)
        return true
    }

    func fail(_ id: UUID, with error: any Error) {
        state.withLock { $0.calls.removeValue(forKey: id) }?.continuation.resume(throwing: error)
    }

    func failAll(with error: BusError) {
        let all = state.withLock { state in
            defer {
                state.calls.removeAll()
                state.earliestExpiry = nil
            }
            return Array(state.calls.values)
        }
        for call in all { call.continuation.resume(throwing: error) }
    }

    /// Fails every call past its instant with `deadline_exceeded`; returns how long until the next
    /// one expires (`nil` when none waits), which bounds the socket thread's next sleep.
    func expire(now: ContinuousClock.Instant, server: String) -> Duration? {
        let (expired, next) = state.withLock { state -> ([Call], ContinuousClock.Instant?) in
            if let earliest = state.earliestExpiry, earliest > now { return ([], earliest) }
            var expired: [Call] = []
            var next: ContinuousClock.Instant?
            for (id, call) in state.calls {
                if call.expiresAt <= now {
                    expired.append(call)
                    state.calls[id] = nil
                } else if next.map({ call.expiresAt < $0 }) ?? true {
                    next = call.expiresAt
                }
            }
            state.earliestExpiry = next
            return (expired, next)
        }
        for call in expired {
            call.continuation.resume(throwing: BusError(.deadlineExceeded, "no reply from \(server) to \(call.type) before the deadline"))
        }
        return next.map { $0 - now }
    }

    var count: Int { state.withLock { $0.calls.count } }
}
