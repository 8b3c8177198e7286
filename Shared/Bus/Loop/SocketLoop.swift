import CZeroMQ
import Foundation
import Locks
import Logging
import Synchronization

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

/// Owns one ZeroMQ socket (with its ZAP handler and monitor) on a dedicated thread.
///
/// libzmq sockets are not thread-safe and waiting on one blocks; the cooperative thread pool has
/// as many threads as cores, so a blocking wait there would stall every task in the process. Each
/// socket therefore lives on its own thread: any task hands it outgoing messages with ``send(_:)``
/// (a locked queue, and an eventfd wake-up only if the loop sleeps), and received messages come
/// back through callbacks, every message waiting at a wake-up in one batch (see `SocketLoop+Run`).
final class SocketLoop: Sendable {
    let name: String
    let wakeup: WakeupSignal
    let state = LockedValue(State())
    /// Set by the loop just before it sleeps, cleared when it wakes. Senders write the eventfd only
    /// while it is set: a loop that is awake takes the queue before it sleeps again anyway, so a
    /// busy loop gets no wake-up system calls at all (one per batch at most).
    let sleeping = Atomic<Bool>(false)
    let counters = LoopCounters()

    struct State {
        var outgoing: [OutgoingMessage] = []
        var stopping = false
        var exited = false
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private init(name: String, wakeup: WakeupSignal) {
        self.name = name
        self.wakeup = wakeup
    }

    /// Starts the thread, runs `setup` on it (create, configure, bind or connect the sockets) and
    /// returns once setup has succeeded; a setup error is thrown here and the thread ends.
    /// `created` gets the loop before its thread starts: an owner that sends from the callbacks
    /// (a server's replies) must hold it before the first message can arrive.
    static func start(
        name: String, policy: BlockedSendPolicy, logger: Logger, callbacks: LoopCallbacks,
        created: @Sendable (SocketLoop) -> Void = { _ in },
        setup: @escaping @Sendable (LoopSockets) throws -> Void
    ) async throws -> SocketLoop {
        let loop = SocketLoop(name: name, wakeup: try WakeupSignal())
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
        // The loop sets `sleeping` before its last look at the queue (under the same lock), so a
        // message appended after that look sees the flag; one appended before it is seen there.
        // Only one sender per sleep writes the eventfd (the exchange).
        if accepted, sleeping.load(ordering: .sequentiallyConsistent),
            sleeping.exchange(false, ordering: .sequentiallyConsistent)
        {
            counters.wakeUpSignals.add(1, ordering: .relaxed)
            wakeup.signal()
        }
        return accepted
    }

    /// Asks the loop to flush what it can, close its sockets and end; returns once it has.
    func stop() async {
        let alreadyExited = state.withLock { state -> Bool in
            state.stopping = true
            return state.exited
        }
        guard !alreadyExited else { return }
        wakeup.signal()
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
private func nameThisThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY)
    guard fd >= 0 else { return }
    defer { close(fd) }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}
