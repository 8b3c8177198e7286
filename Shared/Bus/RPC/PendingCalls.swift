import Foundation
import Locks

/// Calls waiting for their reply, by request id, each with the instant it gives up.
/// Replies arrive on the socket's thread, a batch per wake-up; the expiry sweep runs there too.
///
/// Every way out of the table (a reply, a failure, expiry, ``failAll(with:)``) removes the call
/// under the lock before resuming it, so each continuation is resumed exactly once: that is what
/// lets them be `UnsafeContinuation`s (no per-call checking object).
final class PendingCalls: Sendable {
    typealias Reply = (envelope: Envelope, attachments: [Data])
    typealias Continuation = UnsafeContinuation<Reply, any Error>
    private struct Call {
        var continuation: Continuation
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

    func add(_ id: UUID, type: String, expiresAt: ContinuousClock.Instant, _ continuation: Continuation) {
        state.withLock { state in
            state.calls[id] = Call(continuation: continuation, expiresAt: expiresAt, type: type)
            if state.earliestExpiry.map({ expiresAt < $0 }) ?? true { state.earliestExpiry = expiresAt }
        }
    }

    /// Resumes every call answered in `replies` (one socket wake-up's worth) under one lock, and
    /// empties `replies`; returns how many replies found nobody waiting (late).
    func complete(_ replies: inout ReplyBatch) -> Int {
        guard !replies.isEmpty else { return 0 }
        var waiting: [Continuation?] = []
        waiting.reserveCapacity(replies.count)
        state.withLock { state in
            for index in replies.indices { waiting.append(state.calls.removeValue(forKey: replies.id(index))?.continuation) }
        }
        var late = 0
        for (index, continuation) in waiting.enumerated() {
            if let continuation { continuation.resume(returning: replies.reply(index)) } else { late += 1 }
        }
        replies.removeAll()
        return late
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

/// Replies decoded during one receive batch, waiting to be handed to their callers together.
struct ReplyBatch {
    private var ids: [UUID] = []
    private var replies: [PendingCalls.Reply] = []

    var isEmpty: Bool { ids.isEmpty }
    var count: Int { ids.count }
    var indices: Range<Int> { ids.indices }

    mutating func append(_ id: UUID, _ reply: PendingCalls.Reply) {
        ids.append(id)
        replies.append(reply)
    }

    func id(_ index: Int) -> UUID { ids[index] }
    func reply(_ index: Int) -> PendingCalls.Reply { replies[index] }

    mutating func removeAll() {
        ids.removeAll(keepingCapacity: true)
        replies.removeAll(keepingCapacity: true)
    }
}
