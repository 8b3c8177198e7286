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
    var frames: [Data]
    /// Past this instant the message is dropped unsent: its caller has already given up.
    var expiresAt: ContinuousClock.Instant?
}

/// Callbacks the loop thread makes. They run on the loop's thread and must return quickly:
/// decode a header, resume a continuation or start a task, never block.
struct LoopCallbacks: Sendable {
    var onMessage: @Sendable (ReceivedMessage) -> Void
    var onMonitorEvent: @Sendable (MonitorEvent) -> Void = { _ in }
    /// Called after every wake-up; returns how long the loop may sleep before calling it again.
    var onTick: (@Sendable (ContinuousClock.Instant) -> Duration?)? = nil
    var onDropped: @Sendable (OutgoingMessage, ZMQError?) -> Void = { _, _ in }
}

/// Owns one ZeroMQ socket (with its ZAP handler and monitor) on a dedicated thread.
///
/// libzmq sockets are not thread-safe and `zmq_poll` blocks; the cooperative thread pool has as
/// many threads as cores, so a blocking poll there would stall every task in the process. Each
/// socket therefore lives on its own thread: any task hands it outgoing messages with ``send(_:)``
/// (a locked queue and an eventfd wake-up), and received messages come back through callbacks.
final class SocketLoop: Sendable {
    let name: String
    private let wakeup: WakeupSignal
    private let state = LockedValue(State())
    /// The loop thread's `pthread_self()`, 0 until it starts. A ``send(_:)`` made on the loop's own
    /// thread (a handler started there, see ``RPCServer``) needs no eventfd wake-up: the loop
    /// flushes its queue after every batch it delivers.
    private let loopThread = Atomic<UInt>(0)

    private struct State {
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
    static func start(
        name: String, policy: BlockedSendPolicy, logger: Logger, callbacks: LoopCallbacks,
        setup: @escaping @Sendable (LoopSockets) throws -> Void
    ) async throws -> SocketLoop {
        let loop = SocketLoop(name: name, wakeup: try WakeupSignal())
        try await withCheckedThrowingContinuation { (started: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                loop.loopThread.store(UInt(pthread_self()), ordering: .releasing)
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
            thread.name = "zmq-\(name)"
            thread.start()
        }
        return loop
    }

    /// Queues a message for the socket; safe from any thread or task. Returns `false` once the
    /// loop is stopping (the message is not sent).
    @discardableResult
    func send(_ message: OutgoingMessage) -> Bool {
        let (accepted, wasIdle) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopping else { return (false, false) }
            state.outgoing.append(message)
            return (true, state.outgoing.count == 1)
        }
        // The loop drains the whole queue per wake-up: only the first message needs to wake it,
        // and none does when sent from the loop's own thread (flushed after the current batch).
        if wasIdle, !isLoopThread { wakeup.signal() }
        return accepted
    }

    /// Whether the caller runs on this loop's own thread.
    var isLoopThread: Bool { loopThread.load(ordering: .relaxed) == UInt(pthread_self()) }

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

    private func markExited() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.exited = true
            state.stopping = true
            defer { state.exitWaiters = [] }
            return state.exitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func takeOutgoing() -> (messages: [OutgoingMessage], stopping: Bool) {
        state.withLock { state in
            defer { state.outgoing.removeAll(keepingCapacity: true) }
            return (state.outgoing, state.stopping)
        }
    }

    // MARK: The loop (runs on the dedicated thread only)

    private func run(
        _ sockets: LoopSockets, policy: BlockedSendPolicy, callbacks: LoopCallbacks, logger: Logger
    ) {
        guard let main = sockets.main else { return }
        var poll = PollSet(main: main, wakeupFD: wakeup.fd, zap: sockets.zap?.socket, monitor: sockets.monitor)
        var pending = OutgoingBuffer()
        var timeoutMs: Int = -1
        var lastSent: ContinuousClock.Instant?

        while true {
            poll.wantWritable(!pending.isEmpty)
            // A message queued from this thread outside a receive batch signalled nobody: poll
            // without sleeping so it goes out at once.
            let queuedHere = state.withLock { !$0.outgoing.isEmpty }
            do {
                try poll.wait(timeoutMs: queuedHere ? 0 : pending.isEmpty ? timeoutMs : min(timeoutMs < 0 ? 10 : timeoutMs, 10))
            } catch {
                if !error.isTerminated { logger.error("zmq_poll failed", metadata: ["socket": "\(name)", "error": "\(error)"]) }
                return
            }
            if poll.wakeupReady { wakeup.drain() }

            let (incoming, stopping) = takeOutgoing()
            pending.append(contentsOf: incoming)
            if !pending.isEmpty, pending.flush(through: main, policy: policy, onDropped: callbacks.onDropped, logger: logger) > 0 {
                lastSent = .now
            }
            if poll.mainReadable {
                receiveBatch(from: main, deliver: callbacks.onMessage, logger: logger)
                // Replies made on this thread while the batch was delivered (handlers that
                // finished without suspending) leave now, without a wake-up of their own.
                pending.append(contentsOf: takeOutgoing().messages)
                if !pending.isEmpty, pending.flush(through: main, policy: policy, onDropped: callbacks.onDropped, logger: logger) > 0 {
                    lastSent = .now
                }
            }
            if poll.zapReadable, let (socket, policy) = sockets.zap {
                ZAPPolicy.serve(socket, policy: policy, logger: logger)
            }
            if poll.monitorReadable, let monitor = sockets.monitor {
                while let message = try? monitor.receive() {
                    if let event = MonitorEvent(frames: message.frames) { callbacks.onMonitorEvent(event) }
                }
            }
            if let onTick = callbacks.onTick {
                timeoutMs = onTick(.now).map { max(1, Int($0.inMilliseconds)) } ?? -1
            }
            if stopping {
                pending.append(contentsOf: takeOutgoing().messages)
                if pending.flush(through: main, policy: .drop, onDropped: callbacks.onDropped, logger: logger) > 0 {
                    lastSent = .now
                }
                Self.letRecentSendsLeave(lastSent)
                return
            }
        }
    }

    /// How long after its last send a closing socket waits before `zmq_close`.
    static let closeGrace: Duration = .milliseconds(200)

    /// `zmq_send` only queues a message for libzmq's I/O thread. Closing the socket right after,
    /// even with a positive `ZMQ_LINGER`, lost the last replies of a graceful shutdown in about
    /// one run in ten under load (measured: 2 of 20 runs without this wait, 0 of 20 with it). So a
    /// socket that sent within `closeGrace` gives the I/O thread the rest of that time first; one
    /// that has been quiet closes at once.
    private static func letRecentSendsLeave(_ lastSent: ContinuousClock.Instant?) {
        guard let lastSent else { return }
        let remaining = lastSent + closeGrace - .now
        if remaining > .zero { Thread.sleep(forTimeInterval: remaining.inSeconds) }
    }

    /// Receives what is waiting, at most a batch, so that sends are not starved by a busy peer.
    private func receiveBatch(
        from socket: ZMQSocket, deliver: @Sendable (ReceivedMessage) -> Void, logger: Logger
    ) {
        for _ in 0..<512 {
            do {
                guard let message = try socket.receive() else { return }
                deliver(message)
            } catch {
                logger.warning("receive failed", metadata: ["socket": "\(name)", "error": "\(error)"])
                return
            }
        }
    }
}
