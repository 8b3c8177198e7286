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
        /// For an attempt its caller will send again (an idempotent call), until when a reply that
        /// arrives after this attempt expired is kept for the next attempt (see ``betweenAttempts``).
        var retriedUntil: ContinuousClock.Instant?
    }
    /// A call between two attempts: the reply to an earlier attempt, if one arrived meanwhile.
    private struct BetweenAttempts {
        var until: ContinuousClock.Instant
        var reply: Reply?
    }
    private struct State {
        var calls: [UUID: Call] = [:]
        /// Retried calls whose attempt expired and whose next attempt is not registered yet. A reply
        /// arriving in that gap answers the call: dropped as late, the next attempt reached a server
        /// whose run had ended and ran the request again (under load, again and again).
        var betweenAttempts: [UUID: BetweenAttempts] = [:]
        /// No call expires before this instant. Kept so that the sweep, which runs on every wake-up
        /// of the socket thread, scans the calls only when one may be due: O(1) per reply otherwise.
        /// A completed call may leave it too early; that costs one scan, which recomputes it.
        var earliestExpiry: ContinuousClock.Instant?
    }
    private let state = LockedValue(State())

    /// Registers an attempt, or answers it at once with a reply to an earlier attempt of the same
    /// call that arrived after that attempt expired; returns whether it did (then send nothing).
    /// `retriedUntil`: the call's own deadline, when its caller sends it again after this attempt.
    func add(
        _ id: UUID, type: String, expiresAt: ContinuousClock.Instant, retriedUntil: ContinuousClock.Instant? = nil,
        _ continuation: Continuation
    ) -> Bool {
        let kept = state.withLock { state -> Reply? in
            if let reply = state.betweenAttempts.removeValue(forKey: id)?.reply { return reply }
            state.calls[id] = Call(continuation: continuation, expiresAt: expiresAt, type: type, retriedUntil: retriedUntil)
            if state.earliestExpiry.map({ expiresAt < $0 }) ?? true { state.earliestExpiry = expiresAt }
            return nil
        }
        guard let kept else { return false }
        continuation.resume(returning: kept)
        return true
    }

    /// Resumes every call answered in `replies` (one socket wake-up's worth) under one lock, and
    /// empties `replies`; returns how many replies found nobody waiting (late).
    func complete(_ replies: inout ReplyBatch) -> Int {
        guard !replies.isEmpty else { return 0 }
        var waiting: [Continuation?] = []
        waiting.reserveCapacity(replies.count)
        var late = 0
        state.withLock { state in
            for index in replies.indices {
                let id = replies.id(index)
                if let call = state.calls.removeValue(forKey: id) {
                    waiting.append(call.continuation)
                    continue
                }
                waiting.append(nil)
                // Kept for the call's next attempt if it is between two; else nobody waits.
                if let between = state.betweenAttempts[id], between.reply == nil {
                    state.betweenAttempts[id]?.reply = replies.reply(index)
                } else {
                    late += 1
                }
            }
        }
        for (index, continuation) in waiting.enumerated() {
            continuation?.resume(returning: replies.reply(index))
        }
        replies.removeAll()
        return late
    }

    func fail(_ id: UUID, with error: any Error) {
        state.withLock { state in
            state.betweenAttempts[id] = nil
            return state.calls.removeValue(forKey: id)
        }?.continuation.resume(throwing: error)
    }

    /// Forgets a retried call that gives up between attempts (a reply kept for it goes unused).
    func forget(_ id: UUID) {
        state.withLock { _ = $0.betweenAttempts.removeValue(forKey: id) }
    }

    func failAll(with error: BusError) {
        let all = state.withLock { state in
            defer {
                state.calls.removeAll()
                state.betweenAttempts.removeAll()
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
            if !state.betweenAttempts.isEmpty { state.betweenAttempts = state.betweenAttempts.filter { $0.value.until > now } }
            for (id, call) in state.calls {
                if call.expiresAt <= now {
                    expired.append(call)
                    state.calls[id] = nil
                    if let until = call.retriedUntil, until > now { state.betweenAttempts[id] = BetweenAttempts(until: until) }
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
