/// The pool's bookkeeping as a state machine with no I/O: every decision the pool makes (give an
/// idle connection, open a new one, queue the caller, hand a returned connection or a freed slot
/// to the oldest waiter, close) is a mutating call here that says what to do, and the pool does
/// it outside the lock. Generic over the connection and the waiter so it is tested with plain
/// values (`Tests/PostgresTests/PoolStateTests.swift`), the way postgres-nio tests its pool.
///
/// Invariant: `open` counts connections idle, busy and being opened; it never exceeds `limit`,
/// and a slot handed to a waiter (``SlotOutcome/handOver(_:)``) stays counted.
struct PoolState<Connection, Waiter> {
    let limit: Int
    private(set) var open = 0
    private(set) var idle: [Connection] = []
    /// Callers waiting for a connection, by id. Ids grow, so the smallest is the oldest.
    private var waiting: [Int: Waiter] = [:]
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

    /// ``take()``, or else queues `waiter` (made only if it must wait) under `id`.
    mutating func takeOrWait(id: Int, _ waiter: () -> Waiter) throws(Closed) -> PoolGrant<Connection>? {
        if let grant = try take() { return grant }
        waiting[id] = waiter()
        arrivals.append(id)
        return nil
    }

    /// The queued waiters, oldest first (for tests and statistics).
    var waiters: [(id: Int, waiter: Waiter)] {
        arrivals[head...].compactMap { id in waiting[id].map { (id, $0) } }
    }

    /// How many callers wait.
    var waiterCount: Int { waiting.count }

    /// Changes a queued waiter (to attach its timeout); false when it is no longer queued.
    mutating func updateWaiter(_ id: Int, _ change: (inout Waiter) -> Void) -> Bool {
        guard waiting[id] != nil else { return false }
        change(&waiting[id]!)
        return true
    }

    /// Takes a waiter out of the queue (timed out or cancelled); `nil` when it was already served.
    mutating func removeWaiter(_ id: Int) -> Waiter? {
        defer { if waiting.isEmpty { clearArrivals() } }
        return waiting.removeValue(forKey: id)
    }

    /// The oldest waiter still queued, taken out of the queue.
    private mutating func popOldestWaiter() -> Waiter? {
        while head < arrivals.count {
            let id = arrivals[head]
            head += 1
            if let waiter = waiting.removeValue(forKey: id) {
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
