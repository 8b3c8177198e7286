import CZeroMQ

/// What a loop knows about its main socket between wake-ups, and so whether it may sleep.
///
/// libzmq's signal descriptor (`ZMQ_FD`) is edge-triggered: it becomes readable when commands
/// reach the socket, and libzmq resets it whenever it processes them, which a receive that comes
/// back empty does, and so may a send. So the loop may sleep on it only when the last word on the
/// socket was an empty receive, or a `ZMQ_EVENTS` check made after the last send; and after a
/// wake-up it receives only when the descriptor signalled. Pure state, no sockets: the loop feeds
/// it what happened and asks ``next(pendingSends:)``.
struct MainSocketState: Equatable {
    enum Next: Equatable {
        /// Messages may be waiting: receive before anything else.
        case receive
        /// The descriptor may have been reset without the loop seeing why: ask `ZMQ_EVENTS`.
        case checkEvents
        /// Nothing can be waiting that the descriptor would not signal.
        case sleep
    }

    /// Whether the socket receives at all (a PUB socket does not).
    let canReceive: Bool
    /// Messages may be waiting: true until a receive comes back empty.
    private(set) var mayHaveMessages: Bool
    /// Something may have processed the socket's commands since the last empty receive or check.
    private(set) var needsCheck = false

    init(canReceive: Bool) {
        self.canReceive = canReceive
        mayHaveMessages = canReceive
    }

    /// A receive came back empty: libzmq processed the socket's commands, the descriptor is reset.
    mutating func receivedAll() {
        mayHaveMessages = false
        needsCheck = false
    }

    /// The receive batch ended at its size limit: more may be waiting.
    mutating func receivedBatchLimit() { mayHaveMessages = canReceive }

    /// A message went out. A send may process the socket's commands (consuming the descriptor's
    /// signal of a message that arrived meanwhile). A PUB socket never reads, so it need not look.
    mutating func sent() { if canReceive { needsCheck = true } }

    /// The descriptor signalled while the loop slept.
    mutating func signalled() {
        if canReceive { mayHaveMessages = true } else { needsCheck = true }
    }

    /// The result of a `ZMQ_EVENTS` check; returns whether there is work (a message to receive, or
    /// room for sends that were held back).
    mutating func checked(events: Int32, pendingSends: Bool) -> Bool {
        needsCheck = false
        if canReceive, events & Int32(ZMQ_POLLIN) != 0 { mayHaveMessages = true }
        return mayHaveMessages || (pendingSends && events & Int32(ZMQ_POLLOUT) != 0)
    }

    /// What the loop does next. Held-back sends always ask: the descriptor is how the socket says
    /// it has room again, and the check is what re-arms it.
    func next(pendingSends: Bool) -> Next {
        if mayHaveMessages { return .receive }
        if needsCheck || pendingSends { return .checkEvents }
        return .sleep
    }
}
