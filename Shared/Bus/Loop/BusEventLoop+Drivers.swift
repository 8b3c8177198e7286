import CZeroMQ
import Foundation
import Logging
import SystemCall

#if canImport(Glibc)
    import Glibc
#endif

extension BusEventLoop {
    /// The sockets the loop polls and the `poll` set over their descriptors (the eventfd first).
    /// Lives on the loop's thread only, as a local of its run.
    struct Drivers {
        private var drivers: [SocketDriver] = []
        /// Where each driver's descriptors start in `fds`, and how many it has.
        private var ranges: [Range<Int>] = []
        private var fds: [pollfd]

        init(wakeupFD: Int32) { fds = [pollfd(fd: wakeupFD, events: Int16(POLLIN), revents: 0)] }

        /// Builds a registered socket on this thread; its start resumes with the outcome.
        mutating func open(_ registration: Registration) {
            let loop = registration.loop
            do {
                let sockets = try LoopSockets()
                try registration.setup(sockets)
                guard
                    let driver = SocketDriver(
                        loop: loop, sockets: sockets, policy: registration.policy, callbacks: registration.callbacks,
                        logger: registration.logger)
                else {
                    // No main socket: started, with nothing to serve (as on a thread of its own).
                    registration.started.resume()
                    sockets.closeAll()
                    loop.markExited()
                    return
                }
                let descriptors = try driver.descriptors()
                drivers.append(driver)
                ranges.append(fds.count..<fds.count + descriptors.count)
                fds += descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                registration.started.resume()
            } catch {
                loop.markExited()
                registration.started.resume(throwing: error)
            }
        }

        /// One turn of every driver. Returns how long the loop may sleep (< 0: no limit), or `nil`
        /// when a driver has more to do at once. Stopped drivers leave the set and are closed on a
        /// thread of their own: closing waits for their last sends to leave.
        mutating func turnAll() -> Int? {
            var timeoutMs = -1
            var again = false
            var index = 0
            while index < drivers.count {
                switch drivers[index].turn() {
                case .again:
                    again = true
                case .idle(let limit):
                    if limit >= 0 { timeoutMs = timeoutMs < 0 ? limit : min(timeoutMs, limit) }
                case .stopped:
                    close(at: index)
                    continue
                }
                index += 1
            }
            return again ? nil : timeoutMs
        }

        var haveQueuedWork: Bool { drivers.contains { $0.hasQueuedWork } }

        var wakeupReady: Bool { fds[0].revents != 0 }

        /// Sleeps in `poll` until a descriptor signals or `timeoutMs` passes, then tells each
        /// driver which of its descriptors signalled. A signal (`EINTR`) is waited through. The
        /// one other failure a valid set can see, `ENOMEM` (no memory for the kernel's poll
        /// table), is a sleep with nothing ready: the loop's next turn polls again.
        mutating func sleep(timeoutMs: Int) {
            for driver in drivers { driver.loop.counters.sleeps.add(1, ordering: .relaxed) }
            let count = nfds_t(fds.count)
            let timeout = Int32(clamping: timeoutMs)
            let polled = fds.withUnsafeMutableBufferPointer { buffer in
                try? systemCall("poll") { Glibc.poll(buffer.baseAddress, count, timeout) }
            }
            guard polled != nil else {
                for index in fds.indices { fds[index].revents = 0 }
                return
            }
            for (driver, range) in zip(drivers, ranges) {
                driver.woke(fds[range].lazy.map { $0.revents != 0 })
            }
        }

        private mutating func close(at index: Int) {
            let closing = ClosingDriver(driver: drivers.remove(at: index))
            let range = ranges.remove(at: index)
            fds.removeSubrange(range)
            for later in ranges.indices where later >= index {
                ranges[later] = ranges[later].lowerBound - range.count..<ranges[later].upperBound - range.count
            }
            let thread = Thread {
                closing.driver.close()
                closing.driver.loop.markExited()
            }
            thread.start()
        }
    }

    /// A stopped driver handed to the thread that closes its sockets. `@unchecked Sendable`: the
    /// loop removed it from its set before that thread starts and never touches it again, so one
    /// thread at a time uses the sockets (libzmq allows a socket to move between threads so).
    private final class ClosingDriver: @unchecked Sendable {
        let driver: SocketDriver
        init(driver: SocketDriver) { self.driver = driver }
    }
}
