import Foundation

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
///
/// A pure value with time passed in: ``RPCAdmission`` keeps it under the server's state lock, and
/// it is tested without sockets or clocks.
struct IdempotencyCache {
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

        /// What keeping it costs, roughly: its bytes plus a fixed allowance for the entry itself.
        var cost: Int {
            var total = Self.entryOverhead + (payload?.count ?? 0) + (error.map { $0.message.utf8.count } ?? 0)
            for attachment in attachments { total += attachment.count }
            return total
        }

        /// The dictionary slot, the key's strings and the ring slot, counted per entry so that a
        /// flood of small replies is bounded too.
        static let entryOverhead = 512
    }
    enum Admission: Sendable {
        /// First time: run the handler, then call ``complete(_:_:)``.
        case run
        /// Already running: the waiter was queued and is answered on completion.
        case joined
        /// Done before: answer with this outcome.
        case replay(Outcome)
        /// The key was used, within the window, for a request with another body: the caller
        /// reused a key for a different action, which is refused rather than answered with the
        /// other action's reply.
        case mismatch
    }

    private enum Entry {
        case running([Waiter], digest: Int)
        case done(Outcome, digest: Int, cost: Int, expires: ContinuousClock.Instant)
    }

    private var entries: [Key: Entry] = [:]
    /// Keys in the order they were first admitted, oldest first, for eviction.
    private var order = KeyRing()
    /// Bytes the outcomes kept are charged (see ``Outcome/cost``), for tests and metrics.
    private(set) var bytes = 0
    let limits: IdempotencyLimits

    init(limits: IdempotencyLimits) {
        self.limits = limits
    }

    /// Admits one (re)try of the request whose payload (and attachments) hash to `digest`.
    mutating func admit(key: Key, digest: Int, waiter: Waiter, now: ContinuousClock.Instant) -> Admission {
        if let index = entries.index(forKey: key) {
            switch entries.values[index] {
            case .running(var waiters, let first):
                guard first == digest else { return .mismatch }
                // Emptied first so that appending does not copy the array.
                entries.values[index] = .running([], digest: first)
                waiters.append(waiter)
                entries.values[index] = .running(waiters, digest: first)
                return .joined
            case .done(let outcome, let first, _, let expires) where expires > now:
                return first == digest ? .replay(outcome) : .mismatch
            case .done(_, _, let cost, _):
                // Expired: run again; the key keeps its place in the eviction order.
                bytes -= cost
                entries.values[index] = .running([], digest: digest)
                return .run
            }
        }
        entries[key] = .running([], digest: digest)
        order.append(key)
        evict(now: now)
        return .run
    }

    /// Records the outcome and returns the waiters that joined while it ran. Transient failures
    /// (`unavailable`, `internal`, `deadline_exceeded`) are not remembered: a retry runs again;
    /// nor is an outcome larger than the whole byte bound.
    mutating func complete(_ key: Key, _ outcome: Outcome, now: ContinuousClock.Instant) -> [Waiter] {
        guard let index = entries.index(forKey: key), case .running(let waiters, let digest) = entries.values[index] else {
            return []
        }
        let cost = outcome.cost
        switch outcome.error?.code {
        case .unavailable, .internal, .deadlineExceeded:
            entries.remove(at: index)
        case _ where cost > limits.bytes:
            entries.remove(at: index)
        default:
            entries.values[index] = .done(outcome, digest: digest, cost: cost, expires: now + limits.age)
            bytes += cost
            evict(now: now)
        }
        return waiters
    }

    /// Keys remembered (running or done), for tests.
    var count: Int { entries.count }

    /// Forgets the oldest keys while there are more than `limits.entries`, their outcomes cost
    /// more than `limits.bytes`, or the oldest has expired. Those done are forgotten; one still
    /// running goes to the back of the order, to be forgotten once it is done and old again.
    /// Keys are ordered by admission and expire a fixed age after completion, so the oldest is
    /// (nearly) the first to expire: looking at the front alone keeps this O(1) per call.
    private mutating func evict(now: ContinuousClock.Instant) {
        var rotations = order.count
        while let oldest = order.first {
            let over = order.count > limits.entries || bytes > limits.bytes
            guard let index = entries.index(forKey: oldest) else {
                _ = order.removeFirst()
                continue
            }
            switch entries.values[index] {
            case .done(_, _, let cost, let expires):
                guard over || expires <= now else { return }
                _ = order.removeFirst()
                entries.remove(at: index)
                bytes -= cost
            case .running:
                guard over, rotations > 0 else { return }
                rotations -= 1
                _ = order.removeFirst()
                order.append(oldest)
            }
        }
    }
}

/// How much a server remembers of the replies it may be asked to repeat.
public struct IdempotencyLimits: Sendable, Equatable {
    /// Keys remembered at most.
    public var entries: Int
    /// Bytes of replies (payload and attachments, plus a per-entry allowance) kept at most.
    public var bytes: Int
    /// How long after its completion a reply is repeated to a retry.
    public var age: Duration

    public init(entries: Int = 100_000, bytes: Int = 32 << 20, age: Duration = .seconds(300)) {
        self.entries = entries
        self.bytes = bytes
        self.age = age
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

    /// The oldest key, left in place.
    var first: IdempotencyCache.Key? { count > 0 ? slots[head] : nil }

    private mutating func grow() {
        var bigger = [IdempotencyCache.Key?](repeating: nil, count: max(16, slots.count * 2))
        for offset in 0..<count { bigger[offset] = slots[(head + offset) % slots.count] }
        slots = bigger
        head = 0
    }
}
