import Foundation
import Synchronization

/// Calls waiting for their reply, by request id, each with the instant it gives up.
/// Replies arrive on the socket's thread; the expiry sweep runs there too.
final class PendingCalls: Sendable {
    typealias Reply = (envelope: Envelope, attachments: [Data])
    private struct Call {
        var continuation: CheckedContinuation<Reply, any Error>
        var expiresAt: ContinuousClock.Instant
        var type: String
    }
    private let calls = Mutex<[UUID: Call]>([:])

    func add(_ id: UUID, type: String, expiresAt: ContinuousClock.Instant, _ continuation: CheckedContinuation<Reply, any Error>) {
        calls.withLock { $0[id] = Call(continuation: continuation, expiresAt: expiresAt, type: type) }
    }

    /// Resumes the call `id` with its reply; `false` when nobody waits for it any more (late reply).
    func complete(_ id: UUID, with reply: Reply) -> Bool {
        guard let call = calls.withLock({ $0.removeValue(forKey: id) }) else { return false }
        call.continuation.resume(returning: reply)
        return true
    }

    func fail(_ id: UUID, with error: any Error) {
        calls.withLock { $0.removeValue(forKey: id) }?.continuation.resume(throwing: error)
    }

    func failAll(with error: BusError) {
        let all = calls.withLock { calls in
            defer { calls.removeAll() }
            return Array(calls.values)
        }
        for call in all { call.continuation.resume(throwing: error) }
    }

    /// Fails every call past its instant with `deadline_exceeded`; returns how long until the next
    /// one expires (`nil` when none waits), which bounds the socket thread's next sleep.
    func expire(now: ContinuousClock.Instant, server: String) -> Duration? {
        let (expired, next) = calls.withLock { calls -> ([Call], ContinuousClock.Instant?) in
            var expired: [Call] = []
            var next: ContinuousClock.Instant?
            for (id, call) in calls {
                if call.expiresAt <= now {
                    expired.append(call)
                    calls[id] = nil
                } else if next == nil || call.expiresAt < next! {
                    next = call.expiresAt
                }
            }
            return (expired, next)
        }
        for call in expired {
            call.continuation.resume(throwing: BusError(.deadlineExceeded, "no reply from \(server) to \(call.type) before the deadline"))
        }
        return next.map { $0 - now }
    }

    var count: Int { calls.withLock { $0.count } }
}
