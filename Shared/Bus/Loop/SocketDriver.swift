import CZeroMQ
import Foundation
import Logging

/// One socket's share of a loop thread: what a turn of the loop does for it, and whether it may
/// sleep after. Touched only on the thread that polls the socket: a ``SocketLoop``'s own thread, or
/// the process's ``BusEventLoop``, which turns every registered driver in each of its turns.
///
/// Each turn hands libzmq everything queued, receives every message waiting (up to a batch limit,
/// so sends are not starved) and sends what handlers answered meanwhile; the loop sleeps only when
/// every driver says ``MainSocketState`` can have nothing waiting unseen.
final class SocketDriver {
    let loop: SocketLoop
    let sockets: LoopSockets
    let main: ZMQSocket
    private let policy: BlockedSendPolicy
    private let callbacks: LoopCallbacks
    private let logger: Logger
    private var mainState: MainSocketState
    private var pending = OutgoingBuffer()
    private var timeoutMs = -1
    private(set) var lastSent: ContinuousClock.Instant?
    // Whatever the helpers' descriptors say, look at them once at the start.
    private var zapDue: Bool
    private var monitorDue: Bool
    /// The queue and this array swap places each turn, so neither is reallocated per batch.
    private var taken: [OutgoingMessage] = []

    /// What the loop may do after a turn.
    enum Turn: Equatable {
        /// More may be waiting: turn again before sleeping.
        case again
        /// Nothing waits unseen; wake by `timeoutMs` at the latest (< 0: no limit).
        case idle(timeoutMs: Int)
        /// The loop is stopping: everything sendable was flushed; close the sockets.
        case stopped
    }

    init?(loop: SocketLoop, sockets: LoopSockets, policy: BlockedSendPolicy, callbacks: LoopCallbacks, logger: Logger) {
        guard let main = sockets.main else { return nil }
        self.loop = loop
        self.sockets = sockets
        self.main = main
        self.policy = policy
        self.callbacks = callbacks
        self.logger = logger
        mainState = MainSocketState(canReceive: main.kind != .publisher)
        zapDue = sockets.zap != nil
        monitorDue = sockets.monitor != nil
    }

    /// The descriptors to sleep on: the main socket's, then the ZAP handler's and the monitor's
    /// when there are, in the order ``woke(_:)`` takes their readiness.
    func descriptors() throws(ZMQError) -> [Int32] {
        var fds = [try main.signalDescriptor()]
        if let zap = sockets.zap { fds.append(try zap.socket.signalDescriptor()) }
        if let monitor = sockets.monitor { fds.append(try monitor.signalDescriptor()) }
        return fds
    }

    /// After a sleep: which of ``descriptors()`` signalled, in their order.
    func woke(_ ready: some Collection<Bool>) {
        var flags = ready.makeIterator()
        if flags.next() == true { mainState.signalled() }
        if sockets.zap != nil, flags.next() == true { zapDue = true }
        if sockets.monitor != nil, flags.next() == true { monitorDue = true }
    }

    /// Whether messages were queued since the last turn (or a stop asked for): the loop must not
    /// sleep. Read after setting the waker's `sleeping` flag.
    var hasQueuedWork: Bool { loop.state.withLock { !$0.outgoing.isEmpty || $0.stopping } }

    func turn() -> Turn {
        loop.counters.turns.add(1, ordering: .relaxed)
        let stopping = takeQueued()
        flush(policy)
        if mainState.next(pendingSends: false) == .receive {
            if receiveBatch() {
                mainState.receivedAll()
            } else {
                mainState.receivedBatchLimit()
            }
            // Replies made on this thread while the batch was delivered (handlers that finished
            // without suspending) leave now, without a wake-up of their own.
            _ = takeQueued()
            flush(policy)
        }
        if zapDue, let (socket, policy) = sockets.zap {
            ZAPPolicy.serve(socket, policy: policy, logger: logger)
        }
        if monitorDue, let monitor = sockets.monitor {
            while let message = try? monitor.receive() {
                if let event = MonitorEvent(frames: message.frames) { callbacks.onMonitorEvent(event) }
            }
        }
        (zapDue, monitorDue) = (false, false)
        if let onTick = callbacks.onTick {
            timeoutMs = onTick(.now).map { max(1, Int($0.inMilliseconds)) } ?? -1
        }
        if stopping {
            _ = takeQueued()
            flush(.drop)
            return .stopped
        }
        switch mainState.next(pendingSends: !pending.isEmpty) {
        case .receive:
            return .again
        case .checkEvents:
            let events = (try? main.events()) ?? 0
            if mainState.checked(events: events, pendingSends: !pending.isEmpty) { return .again }
        case .sleep:
            break
        }
        // Held-back sends are retried at least every 10 ms.
        return .idle(timeoutMs: pending.isEmpty ? timeoutMs : min(timeoutMs < 0 ? 10 : timeoutMs, 10))
    }

    /// Moves the queue into the buffer; returns whether the loop is stopping.
    private func takeQueued() -> Bool {
        let stopping = loop.state.withLock { state in
            if !state.outgoing.isEmpty { swap(&state.outgoing, &taken) }
            return state.stopping
        }
        pending.append(contentsOf: taken)
        taken.removeAll(keepingCapacity: true)
        return stopping
    }

    private func flush(_ policy: BlockedSendPolicy) {
        guard !pending.isEmpty else { return }
        let sent = pending.flush(through: main, policy: policy, onDropped: callbacks.onDropped, logger: logger)
        if sent > 0 {
            lastSent = .now
            mainState.sent()
            loop.counters.sent.add(sent, ordering: .relaxed)
        }
    }

    /// Receives every message waiting, up to ``SocketLoop/receiveBatchLimit``, each read in place
    /// and handed to the callback, then ends the batch. Returns `true` when a receive came back
    /// empty (the socket is drained), `false` at the limit.
    private func receiveBatch() -> Bool {
        let frames = main.received
        defer {
            callbacks.onBatchEnd?()
            frames.releaseLargeFrames()
        }
        var received = 0
        defer { loop.counters.received.add(received, ordering: .relaxed) }
        for _ in 0..<SocketLoop.receiveBatchLimit {
            do {
                guard try main.receive(into: frames) else { return true }
                received += 1
                callbacks.onMessage(frames)
            } catch {
                logger.debug("receive failed", metadata: ["socket": "\(loop.name)", "error": "\(error)"])
                return true
            }
        }
        return false
    }

    /// Closes the sockets once recent sends have had their moment to leave (see
    /// ``SocketLoop/letRecentSendsLeave(_:)``). Blocks: a shared loop calls it on a thread of its own.
    func close() {
        SocketLoop.letRecentSendsLeave(lastSent)
        sockets.closeAll()
    }
}
