import CZeroMQ
import Testing

@testable import Bus

/// When a socket loop may sleep (``MainSocketState``): the rules that keep an edge-triggered
/// `ZMQ_FD` from hiding a message, checked without sockets.
@Suite struct MainSocketStateTests {
    let readable = Int32(ZMQ_POLLIN)
    let writable = Int32(ZMQ_POLLOUT)

    /// `checked` mutates, which `#expect` cannot do in place.
    private func check(_ state: inout MainSocketState, events: Int32, pendingSends: Bool) -> Bool {
        state.checked(events: events, pendingSends: pendingSends)
    }

    @Test func receivesFirstThenSleepsOnlyAfterAnEmptyReceive() {
        var state = MainSocketState(canReceive: true)
        #expect(state.next(pendingSends: false) == .receive)
        state.receivedBatchLimit()
        #expect(state.next(pendingSends: false) == .receive)
        state.receivedAll()
        #expect(state.next(pendingSends: false) == .sleep)
        state.signalled()
        #expect(state.next(pendingSends: false) == .receive)
    }

    @Test func aSendMeansLookingAgainBeforeSleeping() {
        var state = MainSocketState(canReceive: true)
        state.receivedAll()
        state.sent()
        #expect(state.next(pendingSends: false) == .checkEvents)
        #expect(!check(&state, events: writable, pendingSends: false))
        #expect(state.next(pendingSends: false) == .sleep)
        state.sent()
        #expect(check(&state, events: readable | writable, pendingSends: false))
        #expect(state.next(pendingSends: false) == .receive)
        // The empty receive that follows settles it, sends before it included.
        state.sent()
        state.receivedAll()
        #expect(state.next(pendingSends: false) == .sleep)
    }

    @Test func heldBackSendsWaitForRoom() {
        var state = MainSocketState(canReceive: true)
        state.receivedAll()
        #expect(state.next(pendingSends: true) == .checkEvents)
        #expect(!check(&state, events: 0, pendingSends: true))
        #expect(state.next(pendingSends: true) == .checkEvents)
        #expect(check(&state, events: writable, pendingSends: true))
        #expect(state.next(pendingSends: true) == .checkEvents)
    }

    @Test func aPublisherNeverReceivesButProcessesItsCommands() {
        var state = MainSocketState(canReceive: false)
        #expect(state.next(pendingSends: false) == .sleep)
        state.sent()
        #expect(state.next(pendingSends: false) == .sleep)
        state.signalled()
        #expect(state.next(pendingSends: false) == .checkEvents)
        #expect(!check(&state, events: readable | writable, pendingSends: false))
        #expect(state.next(pendingSends: false) == .sleep)
    }
}
