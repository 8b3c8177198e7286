import Synchronization

/// How other threads wake a loop thread that sleeps in `poll`: its eventfd, and the flag that says
/// whether it sleeps. A per-socket loop has one of its own; on the process's ``BusEventLoop`` every
/// socket and the job queue share the loop's one.
///
/// The loop sets `sleeping` before its last look at its queues (under their locks), so work queued
/// after that look sees the flag; work queued before it is seen there. Only one waker per sleep
/// writes the eventfd (the exchange), and a busy loop gets no wake-up system calls at all.
final class LoopWaker: Sendable {
    let signal: WakeupSignal
    let sleeping = Atomic<Bool>(false)

    init() throws(ZMQError) {
        do { signal = try WakeupSignal() } catch { throw ZMQError(error) }
    }

    /// After queueing work: wakes the loop if it sleeps. Returns whether this call wrote the eventfd.
    @discardableResult
    func wakeIfSleeping() -> Bool {
        guard sleeping.load(ordering: .sequentiallyConsistent), sleeping.exchange(false, ordering: .sequentiallyConsistent)
        else { return false }
        signal.signal()
        return true
    }
}
