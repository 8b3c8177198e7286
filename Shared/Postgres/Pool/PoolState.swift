/// The pool's bookkeeping as a state machine with no I/O: every decision the pool makes (give an
/// idle connection, open a new one, queue the caller, hand a returned connection or a freed slot
/// to the oldest waiter, close) is a mutating call here that says what to do, and the pool does
/// it outside the lock. Generic over the connection and the waiter so it is tested with plain
/// values (`Tests/PostgresTests/PoolStateTests.swift`), the way postgres-nio tests its pool.
///
/// Invariant: `open` counts connections idle, busy and being opened; it never exceeds `limit`,
/// and a slot handed to a waiter (``SlotOutcome/handOver(_:)``) stays counted.
///
/// Timeouts are actions too: each waiter is queued with its deadline, and one timer per pool
/// (not a task per waiter) is armed when the state says so (``Admission/queued(armTimer:)``);
/// when it fires, ``expire(now:)`` hands back the waiters whose deadline passed and when to fire
/// next. Every checkout of a pool waits the same `checkoutTimeout`, so deadlines follow arrival
/// order and the oldest waiter's is the next to pass.
struct PoolState<Connection, Waiter> {
    let limit: Int
    private(set) var open = 0
    private(set) var idle: [Connection] = []
    /// Callers waiting for a connection, by id, with their deadlines. Ids grow, so the smallest
    /// is the oldest.
    private var waiting: [Int: (waiter: Waiter, deadline: ContinuousClock.Instant)] = [:]
    /// When the armed timer fires; nil when none is armed.
    private(set) var timer: ContinuousClock.Instant?
    /// Waiter ids in arrival order from `head` on; an id no longer in `waiting` (timed out or
    /// cancelled) is skipped when reached. Every operation is O(1) amortised: under overload
    /// thousands wait, and a linear scan per arrival and per hand-over made the pool's lock the
    /// hot spot.
    private var arrivals: [Int] = []
    private var head = 0
    private var nextWaiterID = 0
    private(set) var closed = false

    init(limit: Int) {
        precondition(limit > 0, "a pool needs at least one connection")
        self.limit = limit
    }

    struct Closed: Error {}

    /// A grant available right now, or `nil` when the caller must wait.
    mutating func take() throws(Closed) -> PoolGrant<Connection>? {
        if closed { throw Closed() }
        if let connection = idle.popLast() { return .connection(connection) }
        if open < limit {
            open += 1
            return .create
        }
        return nil
    }

    /// A number for a caller about to wait, so its timeout or cancellation can find it.
    mutating func makeWaiterID() -> Int {
        nextWaiterID += 1
        return nextWaiterID
    }

    enum Admission {
        /// Use this grant now.
        case granted(PoolGrant<Connection>)
        /// Queued; with an instant, arm the pool's timer to fire then (none was armed).
        case queued(armTimer: ContinuousClock.Instant?)
    }

    /// ``take()``, or else queues `waiter` (made only if it must wait) under `id` until `deadline`.
    mutating func takeOrWait(id: Int, until deadline: ContinuousClock.Instant, _ waiter: () -> Waiter) throws(Closed) -> Admission {
        if let grant = try take() { return .granted(grant) }
        waiting[id] = (waiter(), deadline)
        arrivals.append(id)
        guard timer == nil else { return .queued(armTimer: nil) }
        timer = deadline
        return .queued(armTimer: deadline)
    }

    /// The queued waiters, oldest first (for tests and statistics).
    var waiters: [(id: Int, waiter: Waiter)] {
        arrivals[head...].compactMap { id in waiting[id].map { (id, $0.waiter) } }
    }

    /// How many callers wait.
    var waiterCount: Int { waiting.count }

    /// Takes a waiter out of the queue (cancelled); `nil` when it was already served or expired.
    mutating func removeWaiter(_ id: Int) -> Waiter? {
        defer { if waiting.isEmpty { clearArrivals() } }
        return waiting.removeValue(forKey: id)?.waiter
    }

    /// The timer fired at `now`: the waiters whose deadline passed, oldest first, taken out of the
    /// queue (fail them with a checkout timeout), and when to fire next (nil: nobody waits).
    mutating func expire(now: ContinuousClock.Instant) -> (expired: [Waiter], next: ContinuousClock.Instant?) {
        var expired: [Waiter] = []
        timer = nil
        while head < arrivals.count {
            let id = arrivals[head]
            guard let queued = waiting[id] else {
                head += 1  // served or cancelled before
                continue
            }
            guard queued.deadline <= now else {
                timer = queued.deadline
                break
            }
            waiting[id] = nil
            head += 1
            expired.append(queued.waiter)
        }
        if waiting.isEmpty { clearArrivals() }
        return (expired, timer)
    }

    /// The oldest waiter still queued, taken out of the queue.
    private mutating func popOldestWaiter() -> Waiter? {
        while head < arrivals.count {
            let id = arrivals[head]
            head += 1
            if let waiter = waiting.removeValue(forKey: id)?.waiter {
                if waiting.isEmpty {
                    clearArrivals()
                } else if head > 1024 && head * 2 > arrivals.count {
                    arrivals.removeFirst(head)
                    head = 0
                }
                return waiter
            }
        }
        clearArrivals()
        return nil
    }

    private mutating func clearArrivals() {
        arrivals.removeAll(keepingCapacity: true)
        head = 0
    }

    enum CheckinOutcome {
        /// Give the connection to this waiter.
        case handOver(Waiter)
        /// Kept idle for the next caller.
        case keptIdle
        /// The pool is closed: close the connection (its slot is already given up).
        case close
    }

    /// A healthy connection comes back.
    mutating func checkin(_ connection: Connection) -> CheckinOutcome {
        if closed {
            open -= 1
            return .close
        }
        if let waiter = popOldestWaiter() { return .handOver(waiter) }
        idle.append(connection)
        return .keptIdle
    }

    enum SlotOutcome {
        /// The slot passes to this waiter, which opens a connection in it (`open` unchanged).
        case handOver(Waiter)
        case freed
    }

    /// A connection is gone (broken, or failed to open): its slot frees up.
    mutating func freeSlot() -> SlotOutcome {
        guard !closed, let waiter = popOldestWaiter() else {
            open -= 1
            return .freed
        }
        return .handOver(waiter)
    }

    /// Closes the pool: every idle connection (to close) and every waiter (to fail). Busy
    /// connections give up their slots as they come back.
    mutating func close() -> (idle: [Connection], waiters: [Waiter]) {
        closed = true
        let queued = waiters.map(\.waiter)
        open -= idle.count
        defer {
            idle = []
            waiting = [:]
            timer = nil
            clearArrivals()
        }
        return (idle, queued)
    }
}

/// What a pool caller gets: a connection to use, or permission to open one (a reserved slot).
enum PoolGrant<Connection> {
    case connection(Connection)
    case create
}

extension PoolState: Sendable where Connection: Sendable, Waiter: Sendable {}
extension PoolGrant: Sendable where Connection: Sendable {}
