import CZeroMQ
import Foundation
import Locks
import Logging

/// What a loop does with an outgoing message its socket cannot take right now.
enum BlockedSendPolicy: Sendable {
    /// ROUTER replies and PUB events: one slow or vanished peer must not hold up the others.
    case drop
    /// DEALER requests: keep the message until a peer can take it (`ZMQ_IMMEDIATE` queues only on
    /// live connections) or until its own deadline passes.
    case wait
}

struct OutgoingMessage: Sendable {
    /// The frames to send.
    enum Content: Sendable {
        /// Routing frames (none from a DEALER), then one body frame: every RPC message. The body
        /// is a byte array, not a `Data`: one allocation per message instead of two.
        case body(route: [Data], body: [UInt8])
        /// Frames sent as given (events, the ZAP handler, raw test peers).
        case frames([Data])
    }
    var content: Content
    /// Past this instant the message is dropped unsent: its caller has already given up.
    var expiresAt: ContinuousClock.Instant?

    init(frames: [Data], expiresAt: ContinuousClock.Instant?) {
        content = .frames(frames)
        self.expiresAt = expiresAt
    }

    init(route: [Data] = [], body: [UInt8], expiresAt: ContinuousClock.Instant?) {
        content = .body(route: route, body: body)
        self.expiresAt = expiresAt
    }
}

/// Callbacks the loop thread makes. They run on the loop's thread and must return quickly:
/// decode a header, resume a continuation or start a task, never block.
struct LoopCallbacks: Sendable {
    /// One received message, its frames borrowed from libzmq until the callback returns.
    var onMessage: @Sendable (ReceivedFrames) -> Void
    /// After each batch of messages received in one wake-up: where work collected per message
    /// (replies to hand to waiting callers) is handed on at once.
    var onBatchEnd: (@Sendable () -> Void)? = nil
    var onMonitorEvent: @Sendable (MonitorEvent) -> Void = { _ in }
    /// Called after every wake-up; returns how long the loop may sleep before calling it again.
    var onTick: (@Sendable (ContinuousClock.Instant) -> Duration?)? = nil
    var onDropped: @Sendable (OutgoingMessage, ZMQError?) -> Void = { _, _ in }
}

/// Owns one ZeroMQ socket (with its ZAP handler and monitor) on a loop thread.
///
/// libzmq sockets are not thread-safe and waiting on one blocks; the cooperative thread pool has
/// as many threads as cores, so a blocking wait there would stall every task in the process. Each
/// socket therefore lives on a loop thread: its own (`BUS_EVENT_LOOP=per-socket`), or the process's
/// one ``BusEventLoop`` (`single`), which polls every socket of the process and runs the tasks that
/// prefer it. Any task hands it outgoing messages with ``send(_:)`` (a locked queue, and an eventfd
/// wake-up only if the loop sleeps), and received messages come back through callbacks, every
/// message waiting at a wake-up in one batch (see ``SocketDriver``).
final class SocketLoop: Sendable {
    let name: String
    /// The loop thread's eventfd and sleeping flag: this socket's own, or the shared loop's.
    let waker: LoopWaker
    /// The shared loop this socket is polled by, `nil` on a thread of its own.
    let eventLoop: BusEventLoop?
    let state = LockedValue(State())
    let counters = LoopCounters()

    struct State {
        var outgoing: [OutgoingMessage] = []
        var stopping = false
        var exited = false
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private init(name: String, waker: LoopWaker, eventLoop: BusEventLoop?) {
        self.name = name
        self.waker = waker
        self.eventLoop = eventLoop
    }

    /// Starts the thread, runs `setup` on it (create, configure, bind or connect the sockets) and
    /// returns once setup has succeeded; a setup error is thrown here and the thread ends.
    /// `created` gets the loop before its thread starts: an owner that sends from the callbacks
    /// (a server's replies) must hold it before the first message can arrive. The socket is polled
    /// by `eventLoop`, else by the process's one when ``BusEventLoopMode/current`` is `single`,
    /// else by a thread of its own.
    static func start(
        name: String, policy: BlockedSendPolicy, eventLoop: BusEventLoop? = nil, logger: Logger, callbacks: LoopCallbacks,
        created: @Sendable (SocketLoop) -> Void = { _ in },
        setup: @escaping @Sendable (LoopSockets) throws -> Void
    ) async throws -> SocketLoop {
        if let eventLoop = try eventLoop ?? (BusEventLoopMode.current == .single ? BusEventLoop.shared() : nil) {
            let loop = SocketLoop(name: name, waker: eventLoop.waker, eventLoop: eventLoop)
            created(loop)
            try await withCheckedThrowingContinuation { (started: CheckedContinuation<Void, any Error>) in
                eventLoop.register(
                    .init(loop: loop, policy: policy, logger: logger, callbacks: callbacks, setup: setup, started: started))
            }
            return loop
        }
        let loop = SocketLoop(name: name, waker: try LoopWaker(), eventLoop: nil)
        created(loop)
        try await withCheckedThrowingContinuation { (started: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                nameThisThread(name)
                let sockets: LoopSockets
                do {
                    sockets = try LoopSockets()
                    try setup(sockets)
                } catch {
                    loop.markExited()
                    started.resume(throwing: error)
                    return
                }
                started.resume()
                loop.run(sockets, policy: policy, callbacks: callbacks, logger: logger)
                sockets.closeAll()
                loop.markExited()
            }
            thread.start()
        }
        return loop
    }

    /// Queues a message for the socket; safe from any thread or task. Returns `false` once the
    /// loop is stopping (the message is not sent).
    @discardableResult
    func send(_ message: OutgoingMessage) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.outgoing.append(message)
            return true
        }
        if accepted, waker.wakeIfSleeping() { counters.wakeUpSignals.add(1, ordering: .relaxed) }
        return accepted
    }

    /// Asks the loop to flush what it can, close its sockets and end; returns once it has.
    func stop() async {
        let alreadyExited = state.withLock { state -> Bool in
            state.stopping = true
            return state.exited
        }
        guard !alreadyExited else { return }
        waker.signal.signal()
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.exited { return true }
                state.exitWaiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func markExited() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.exited = true
            state.stopping = true
            defer { state.exitWaiters = [] }
            return state.exitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Names the calling thread for `top -H` and `perf` (the kernel keeps 15 bytes). Written to
/// `/proc/thread-self/comm`: Foundation's `Thread.name` reached the kernel only sometimes, and
/// `pthread_setname_np` is not visible to Swift on Linux.
func nameThisThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY)
    guard fd >= 0 else { return }
    defer { close(fd) }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}
