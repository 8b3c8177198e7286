import CZeroMQ
import Foundation
import Logging

/// The per-socket loop (`BUS_EVENT_LOOP=per-socket`): runs on the socket's dedicated thread only,
/// turning its one ``SocketDriver`` and sleeping in one `poll` when the driver says nothing can be
/// waiting unseen. A busy loop never sleeps: it goes round as long as messages keep coming, with no
/// wake-up system calls.
extension SocketLoop {
    /// Most messages received per turn before queued sends get their turn.
    static let receiveBatchLimit = 512

    func run(_ sockets: LoopSockets, policy: BlockedSendPolicy, callbacks: LoopCallbacks, logger: Logger) {
        guard let driver = SocketDriver(loop: self, sockets: sockets, policy: policy, callbacks: callbacks, logger: logger)
        else { return }
        var poll: PollSet
        do {
            poll = try PollSet(main: driver.main, wakeupFD: waker.signal.fd, zap: sockets.zap?.socket, monitor: sockets.monitor)
        } catch {
            logger.error("socket loop cannot poll", metadata: ["socket": "\(name)", "error": "\(error)"])
            return
        }
        while true {
            switch driver.turn() {
            case .again:
                continue
            case .stopped:
                Self.letRecentSendsLeave(driver.lastSent)
                return
            case .idle(let timeoutMs):
                guard sleepUntilSignalled(&poll, driver: driver, timeoutMs: timeoutMs, logger: logger) else { return }
                var ready = [poll.mainSignalled]
                if sockets.zap != nil { ready.append(poll.zapSignalled) }
                if sockets.monitor != nil { ready.append(poll.monitorSignalled) }
                driver.woke(ready)
            }
        }
    }

    /// Sleeps unless something was queued or a stop asked for since the loop last looked; returns
    /// `false` when polling itself failed (the loop ends).
    private func sleepUntilSignalled(_ poll: inout PollSet, driver: SocketDriver, timeoutMs: Int, logger: Logger) -> Bool {
        waker.sleeping.store(true, ordering: .sequentiallyConsistent)
        if driver.hasQueuedWork {
            waker.sleeping.store(false, ordering: .sequentiallyConsistent)
            return true
        }
        counters.sleeps.add(1, ordering: .relaxed)
        do {
            try poll.wait(timeoutMs: timeoutMs)
        } catch {
            logger.error("poll failed", metadata: ["socket": "\(name)", "error": "\(error)"])
            return false
        }
        waker.sleeping.store(false, ordering: .sequentiallyConsistent)
        if poll.wakeupReady { waker.signal.drain() }
        return true
    }

    /// How long after its last send a closing socket waits before `zmq_close`.
    static let closeGrace: Duration = .milliseconds(200)

    /// `zmq_send` only queues a message for libzmq's I/O thread. Closing the socket right after,
    /// even with a positive `ZMQ_LINGER`, lost the last replies of a graceful shutdown in about
    /// one run in ten under load (measured: 2 of 20 runs without this wait, 0 of 20 with it). So a
    /// socket that sent within `closeGrace` gives the I/O thread the rest of that time first; one
    /// that has been quiet closes at once.
    static func letRecentSendsLeave(_ lastSent: ContinuousClock.Instant?) {
        guard let lastSent else { return }
        let remaining = lastSent + closeGrace - .now
        if remaining > .zero { Thread.sleep(forTimeInterval: remaining.inSeconds) }
    }
}
