import Foundation
import Locks

/// Remembers, per idempotency key, a request in progress and its outcome for a while, so that a
/// client retrying a call whose reply was lost gets the original answer and the handler runs once.
/// Durable de-duplication across restarts is the store's job (a unique key in its table); this
/// covers retries to a live server, including those that arrive while the first is still running.
///
/// Every idempotent call (the acceptance path's `audit.record`) passes here twice, so it is built
/// for that: a key's hash is computed once, each call looks the key up once on admission and once
/// on completion, and the eviction order is a ring (no array shifting). Measured before this, with
/// the hash recomputed on every dictionary access and the order array shifted every 4,096
/// admissions, the cache was about a sixth of an idempotent call's CPU.
final class IdempotencyCache: Sendable {
    /// What a key is scoped by: the same key from another caller or for another method is another
    /// request. Its hash is computed once, when it is made: a dictionary hashes a key on every
    /// access, and hashing three strings was the cache's largest cost.
    struct Key: Hashable, Sendable {
        let type: String
        let principal: Principal?
        let key: String
        private let hash: Int

        init(type: String, principal: Principal?, key: String) {
            self.type = type
            self.principal = principal
            self.key = key
            var hasher = Hasher()
            hasher.combine(type)
            hasher.combine(principal)
            hasher.combine(key)
            hash = hasher.finalize()
        }

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }

        static func == (a: Key, b: Key) -> Bool {
            a.hash == b.hash && a.key == b.key && a.type == b.type && a.principal == b.principal
        }
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
        /// Keys in the order they were first admitted, oldest first, for eviction.
        var order: KeyRing
    }

    private let state: LockedValue<State>
    private let capacity: Int
    private let ttl: Duration

    init(capacity: Int, ttl: Duration) {
        self.capacity = capacity
        self.ttl = ttl
        state = LockedValue(State(order: KeyRing()))
    }

    func admit(key: Key, waiter: Waiter, now: ContinuousClock.Instant = .now) -> Admission {
        state.withLock { state in
            if let index = state.entries.index(forKey: key) {
                switch state.entries.values[index] {
                case .running(var waiters):
                    // Emptied first so that appending does not copy the array.
                    state.entries.values[index] = .running([])
                    waiters.append(waiter)
                    state.entries.values[index] = .running(waiters)
                    return .joined
                case .done(let outcome, let expires) where expires > now:
                    return .replay(outcome)
                case .done:
                    // Expired: run again; the key keeps its place in the eviction order.
                    state.entries.values[index] = .running([])
                    return .run
                }
            }
            state.entries[key] = .running([])
            state.order.append(key)
            evict(&state)
            return .run
        }
    }

    /// Records the outcome and returns the waiters that joined while it ran. Transient failures
    /// (`unavailable`, `internal`, `deadline_exceeded`) are not remembered: a retry runs again.
    func complete(_ key: Key, _ outcome: Outcome, now: ContinuousClock.Instant = .now) -> [Waiter] {
        state.withLock { state in
            guard let index = state.entries.index(forKey: key), case .running(let waiters) = state.entries.values[index] else {
                return []
            }
            switch outcome.error?.code {
            case .unavailable, .internal, .deadlineExceeded:
                state.entries.remove(at: index)
            default:
                state.entries.values[index] = .done(outcome, expires: now + ttl)
            }
            return waiters
        }
    }

    /// Keys remembered (running or done), for tests.
    var count: Int { state.withLock { $0.entries.count } }

    /// Drops the oldest keys beyond `capacity`. Those done are forgotten; one still running goes
    /// to the back of the order, to be forgotten once it is done and old again.
    private func evict(_ state: inout State) {
        var excess = state.order.count - capacity
        while excess > 0, let oldest = state.order.removeFirst() {
            excess -= 1
            guard let index = state.entries.index(forKey: oldest) else { continue }
            if case .done = state.entries.values[index] {
                state.entries.remove(at: index)
            } else {
                state.order.append(oldest)
            }
        }
    }
}

/// A first-in first-out ring of keys that grows by doubling and never shifts its contents.
struct KeyRing {
    private var slots: [IdempotencyCache.Key?] = []
    private var head = 0
    private(set) var count = 0

    mutating func append(_ key: IdempotencyCache.Key) {
        if count == slots.count { grow() }
        slots[(head + count) % slots.count] = key
        count += 1
    }

    mutating func removeFirst() -> IdempotencyCache.Key? {
        guard count > 0 else { return nil }
        defer {
            slots[head] = nil
            head = (head + 1) % slots.count
            count -= 1
        }
        return slots[head]
    }

    private mutating func grow() {
        var bigger = [IdempotencyCache.Key?](repeating: nil, count: max(16, slots.count * 2))
        for offset in 0..<count { bigger[offset] = slots[(head + offset) % slots.count] }
        slots = bigger
        head = 0
    }
}
