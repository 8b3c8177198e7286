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
        #expect(try state.takeOrWait(id: first) { "first" } == nil)
        #expect(try state.takeOrWait(id: second) { "second" } == nil)
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
            #expect(try state.takeOrWait(id: id) { "w\(n)" } == nil)
        }
        // Every waiter but each third times out; the last one's timeout is attached first.
        #expect(state.updateWaiter(ids[19_999]) { $0 += "+timeout" })
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
        #expect(try state.takeOrWait(id: late) { "late" } == nil)
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
        _ = try state.takeOrWait(id: id) { "waiting" }
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

    @Test("a waiter that timed out leaves the queue once; it is not served after")
    func removeWaiter() throws {
        var state = State(limit: 1)
        _ = try state.take()
        let id = state.makeWaiterID()
        _ = try state.takeOrWait(id: id) { "late" }
        #expect(state.updateWaiter(id) { $0 += " (timer set)" })
        #expect(state.removeWaiter(id) == "late (timer set)")
        #expect(state.removeWaiter(id) == nil)
        #expect(!state.updateWaiter(id) { _ in })
        guard case .keptIdle = state.checkin(1) else {
            Issue.record("handed to a removed waiter")
            return
        }
    }

    @Test("a waiter is made only when the caller has to wait")
    func waiterMadeOnlyWhenNeeded() throws {
        var state = State(limit: 1)
        var made = 0
        let grant = try state.takeOrWait(id: state.makeWaiterID()) {
            made += 1
            return "unused"
        }
        #expect(Self.isCreate(grant))
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
        #expect(try state.takeOrWait(id: id) { "waiting" } != nil)  // the idle connection: no wait
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
        for name in ["a", "b"] { _ = try state.takeOrWait(id: state.makeWaiterID()) { name } }
        #expect(state.close().waiters == ["a", "b"])
        #expect(state.waiters.isEmpty)
    }
}
