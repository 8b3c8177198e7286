import Testing

@testable import Postgres

/// The pool's decisions without a database: connections are numbers, waiters are names.
@Suite("Pool state")
struct PoolStateTests {
    typealias State = PoolState<Int, String>

    static func isCreate(_ grant: PoolGrant<Int>?) -> Bool {
        if case .create = grant { return true }
        return false
    }

    static func connection(_ grant: PoolGrant<Int>?) -> Int? {
        if case .connection(let connection) = grant { return connection }
        return nil
    }

    static func granted(_ admission: State.Admission) -> PoolGrant<Int>? {
        if case .granted(let grant) = admission { return grant }
        return nil
    }

    /// Whether the caller was queued, and whether that armed the timer (at which instant).
    static func queued(_ admission: State.Admission) -> (queued: Bool, armed: ContinuousClock.Instant?) {
        if case .queued(let armed) = admission { return (true, armed) }
        return (false, nil)
    }

    let start = ContinuousClock.now
    /// A waiter's deadline, `seconds` after ``start``.
    func deadline(_ seconds: Int = 5) -> ContinuousClock.Instant { start + .seconds(seconds) }

    @Test("slots are granted up to the limit, then callers must wait")
    func grantsUpToTheLimit() throws {
        var state = State(limit: 2)
        #expect(Self.isCreate(try state.take()))
        #expect(Self.isCreate(try state.take()))
        #expect(try state.take() == nil)
        #expect(state.open == 2)
    }

    @Test("an idle connection is reused before a new one is opened")
    func idleFirst() throws {
        var state = State(limit: 2)
        _ = try state.take()
        guard case .keptIdle = state.checkin(7) else {
            Issue.record("not kept idle")
            return
        }
        #expect(Self.connection(try state.take()) == 7)
        #expect(state.open == 1)
        #expect(state.idle.isEmpty)
    }

    @Test("a returned connection goes to the oldest waiter, not to the idle list")
    func checkinHandsOverInOrder() throws {
        var state = State(limit: 1)
        _ = try state.take()
        let first = state.makeWaiterID()
        let second = state.makeWaiterID()
        #expect(Self.queued(try state.takeOrWait(id: first, until: deadline()) { "first" }).queued)
        #expect(Self.queued(try state.takeOrWait(id: second, until: deadline()) { "second" }).queued)
        guard case .handOver(let waiter) = state.checkin(1) else {
            Issue.record("not handed over")
            return
        }
        #expect(waiter == "first")
        #expect(state.idle.isEmpty)
        #expect(state.waiters.map(\.waiter) == ["second"])
        #expect(state.open == 1)
    }

    @Test("under overload, waiters that gave up are skipped and the rest are served oldest first")
    func manyWaitersWithTimeoutsKeepTheirOrder() throws {
        var state = State(limit: 1)
        _ = try state.take()
        var ids: [Int] = []
        for n in 0..<20_000 {
            let id = state.makeWaiterID()
            ids.append(id)
            #expect(Self.queued(try state.takeOrWait(id: id, until: deadline()) { "w\(n)" }).queued)
        }
        // Every waiter but each third is cancelled.
        for (n, id) in ids.enumerated() where n % 3 != 0 { #expect(state.removeWaiter(id) != nil) }
        #expect(state.removeWaiter(ids[1]) == nil, "a waiter is removed once")
        #expect(state.waiterCount == 6_667)
        var served: [String] = []
        while case .handOver(let waiter) = state.checkin(1) { served.append(waiter) }
        #expect(served == (0..<20_000).filter { $0 % 3 == 0 }.map { "w\($0)" })
        #expect(state.waiterCount == 0 && state.idle == [1] && state.open == 1)
        // The queue starts afresh: a new waiter is served next.
        _ = try state.take()
        let late = state.makeWaiterID()
        #expect(Self.queued(try state.takeOrWait(id: late, until: deadline()) { "late" }).queued)
        guard case .handOver("late") = state.checkin(1) else {
            Issue.record("the late waiter was not served")
            return
        }
    }

    @Test("a freed slot passes to a waiter without changing the count, or is given up")
    func freeSlot() throws {
        var state = State(limit: 1)
        _ = try state.take()
        let id = state.makeWaiterID()
        _ = try state.takeOrWait(id: id, until: deadline()) { "waiting" }
        guard case .handOver(let waiter) = state.freeSlot() else {
            Issue.record("slot not handed over")
            return
        }
        #expect(waiter == "waiting")
        #expect(state.open == 1)
        guard case .freed = state.freeSlot() else {
            Issue.record("slot not freed")
            return
        }
        #expect(state.open == 0)
        #expect(Self.isCreate(try state.take()))
    }

    @Test("a waiter that was cancelled leaves the queue once; it is not served after")
    func removeWaiter() throws {
        var state = State(limit: 1)
        _ = try state.take()
        let id = state.makeWaiterID()
        _ = try state.takeOrWait(id: id, until: deadline()) { "late" }
        #expect(state.removeWaiter(id) == "late")
        #expect(state.removeWaiter(id) == nil)
        guard case .keptIdle = state.checkin(1) else {
            Issue.record("handed to a removed waiter")
            return
        }
    }

    @Test("a waiter is made only when the caller has to wait")
    func waiterMadeOnlyWhenNeeded() throws {
        var state = State(limit: 1)
        var made = 0
        let admission = try state.takeOrWait(id: state.makeWaiterID(), until: deadline()) {
            made += 1
            return "unused"
        }
        #expect(Self.isCreate(Self.granted(admission)))
        #expect(state.timer == nil)
        #expect(made == 0)
        #expect(state.waiters.isEmpty)
    }

    @Test("closing returns the idle connections and the waiters, refuses later takes, and closes what comes back")
    func close() throws {
        var state = State(limit: 3)
        _ = try state.take()
        _ = try state.take()
        _ = try state.take()
        _ = state.checkin(1)
        let id = state.makeWaiterID()
        #expect(Self.connection(Self.granted(try state.takeOrWait(id: id, until: deadline()) { "waiting" })) == 1)  // idle: no wait
        _ = state.checkin(1)
        let closed = state.close()
        #expect(closed.idle == [1])
        #expect(closed.waiters.isEmpty)
        #expect(state.open == 2)
        #expect(throws: State.Closed.self) { try state.take() }
        guard case .close = state.checkin(2) else {
            Issue.record("kept after close")
            return
        }
        #expect(state.open == 1)
        guard case .freed = state.freeSlot() else {
            Issue.record("slot handed over after close")
            return
        }
        #expect(state.open == 0)
    }

    @Test("closing fails every waiter")
    func closeFailsWaiters() throws {
        var state = State(limit: 1)
        _ = try state.take()
        for name in ["a", "b"] { _ = try state.takeOrWait(id: state.makeWaiterID(), until: deadline()) { name } }
        #expect(state.close().waiters == ["a", "b"])
        #expect(state.waiters.isEmpty)
        // The timer armed for them finds nobody when it fires.
        #expect(state.timer == nil)
        let fired = state.expire(now: deadline())
        #expect(fired.expired.isEmpty && fired.next == nil)
    }

    @Test("one timer: the first waiter arms it, a firing fails the waiters past their deadline and arms it for the next")
    func oneTimerExpiresWaitersInDeadlineOrder() throws {
        var state = State(limit: 1)
        _ = try state.take()
        let ids = (0..<4).map { _ in state.makeWaiterID() }
        let first = Self.queued(try state.takeOrWait(id: ids[0], until: deadline(5)) { "a" })
        #expect(first.queued && first.armed == deadline(5))
        for (id, (name, seconds)) in zip(ids.dropFirst(), [("b", 6), ("c", 7), ("d", 8)]) {
            let later = Self.queued(try state.takeOrWait(id: id, until: deadline(seconds)) { name })
            #expect(later.queued && later.armed == nil, "a timer is armed already")
        }
        #expect(state.timer == deadline(5))

        // "a" is served before its deadline and "c" is cancelled: the firing at 5 s fails nobody.
        guard case .handOver("a") = state.checkin(1) else {
            Issue.record("the oldest waiter was not served")
            return
        }
        #expect(state.removeWaiter(ids[2]) == "c")
        let atFive = state.expire(now: deadline(5))
        #expect(atFive.expired.isEmpty && atFive.next == deadline(6))

        // At 7.5 s "b" is past its deadline, "c" is gone, "d" still has time.
        let later = state.expire(now: start + .milliseconds(7_500))
        #expect(later.expired == ["b"] && later.next == deadline(8))
        #expect(state.waiters.map(\.waiter) == ["d"])

        // Past every deadline: the queue is empty and no timer is due.
        let last = state.expire(now: deadline(9))
        #expect(last.expired == ["d"] && last.next == nil && state.timer == nil)
        #expect(state.waiterCount == 0)

        // The next caller that must wait arms it again.
        let again = Self.queued(try state.takeOrWait(id: state.makeWaiterID(), until: deadline(20)) { "e" })
        #expect(again.armed == deadline(20))
    }
}
