import Foundation
import Locks

/// Remembers, per idempotency key, a request in progress and its outcome for a while, so that a
/// client retrying a call whose reply was lost gets the original answer and the handler runs once.
/// Durable de-duplication across restarts is the store's job (a unique key in its table); this
/// covers retries to a live server, including those that arrive while the first is still running.
final class IdempotencyCache: Sendable {
    /// What a key is scoped by: the same key from another caller or for another method is another
    /// request. A struct rather than one joined string: no string building per request.
    struct Key: Hashable, Sendable {
        var type: String
        var principal: Principal?
        var key: String
    }
    /// Where to send a reply to one (re)try of the request.
    struct Waiter: Sendable {
        var route: [Data]
        var requestId: UUID
    }
    struct Outcome: Sendable {
        /// The reply payload's JSON.
        var payload: [UInt8]?
        var attachments: [Data]
        var error: BusError?
    }
    enum Admission: Sendable {
        /// First time: run the handler, then call ``complete(_:_:)``.
        case run
        /// Already running: the waiter was queued and is answered on completion.
        case joined
        /// Done before: answer with this outcome.
        case replay(Outcome)
    }

    private enum Entry {
        case running([Waiter])
        case done(Outcome, expires: ContinuousClock.Instant)
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var order: [Key] = []  // insertion order, for eviction
        var orderHead = 0
    }

    private let state = LockedValue(State())
    private let capacity: Int
    private let ttl: Duration

    init(capacity: Int, ttl: Duration) {
        self.capacity = capacity
        self.ttl = ttl
    }

    func admit(key: Key, waiter: Waiter) -> Admission {
        state.withLock { state in
            switch state.entries[key] {
            case .running(var waiters):
                waiters.append(waiter)
                state.entries[key] = .running(waiters)
                return .joined
            case .done(let outcome, let expires) where expires > .now:
                return .replay(outcome)
            case .done, nil:
                if state.entries[key] == nil { state.order.append(key) }
                state.entries[key] = .running([])
                evict(&state)
                return .run
            }
        }
    }

    /// Records the outcome and returns the waiters that joined while it ran. Transient failures
    /// (`unavailable`, `internal`, `deadline_exceeded`) are not remembered: a retry runs again.
    func complete(_ key: Key, _ outcome: Outcome) -> [Waiter] {
        state.withLock { state in
            guard case .running(let waiters) = state.entries[key] else { return [] }
            let transient: Set<ErrorCode> = [.unavailable, .internal, .deadlineExceeded]
            if let code = outcome.error?.code, transient.contains(code) {
                state.entries[key] = nil
            } else {
                state.entries[key] = .done(outcome, expires: .now + ttl)
            }
            return waiters
        }
    }

    private func evict(_ state: inout State) {
        while state.order.count - state.orderHead > capacity {
            let oldest = state.order[state.orderHead]
            state.orderHead += 1
            if case .done = state.entries[oldest] { state.entries[oldest] = nil }
        }
        if state.orderHead > 4096 {
            state.order.removeFirst(state.orderHead)
            state.orderHead = 0
        }
    }
}
