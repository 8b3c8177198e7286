import Dispatch
import Foundation
import Locks

/// A `SerialExecutor` that runs every job on one dedicated `Thread`.
///
/// libpq calls block the calling thread (network round trips, `pg_advisory_lock`, `COPY`…). The
/// Swift cooperative pool has as many threads as cores (2 here), so a blocking call there would
/// stall every task in the process. Each ``PostgresConnection`` therefore uses one of these as its
/// actor executor: its libpq calls block only its own thread.
///
/// The thread lives exactly as long as the executor: the owner (the connection actor) keeps the
/// executor alive, and any job waiting for the actor keeps the actor alive. When the executor is
/// released, the thread finishes the queued jobs and exits.
public final class ThreadExecutor: SerialExecutor, Sendable {
    private let queue: JobQueue

    /// Starts the thread. `name` shows in debuggers and `top -H`.
    public init(name: String) {
        queue = JobQueue()
        queue.setExecutor(UnownedSerialExecutor(ordinary: self))
        let queue = self.queue
        let thread = Thread { queue.runLoop() }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    deinit { queue.shutdown() }

    public func enqueue(_ job: consuming ExecutorJob) {
        queue.push(UnownedJob(job))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() {
        precondition(isCurrent, "not running on the thread of this ThreadExecutor")
    }

    /// Whether the caller runs on this executor's thread.
    public var isCurrent: Bool { queue.isCurrentThread }
}

/// The job queue a ``ThreadExecutor``'s thread drains: a `LockedValue`-guarded array, and a counting
/// `DispatchSemaphore` in the role of the condition variable (one `signal` per job, one for
/// shutdown), which keeps it `Sendable` without `@unchecked`.
private final class JobQueue: Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var head = 0
        var stopping = false
        var thread: pthread_t?
        var executor: UnownedSerialExecutor?
    }

    private let state = LockedValue(State())
    private let wakeUp = DispatchSemaphore(value: 0)

    func setExecutor(_ executor: UnownedSerialExecutor) {
        state.withLock { $0.executor = executor }
    }

    func push(_ job: UnownedJob) {
        state.withLock { $0.jobs.append(job) }
        wakeUp.signal()
    }

    var isCurrentThread: Bool {
        guard let id = state.withLock({ $0.thread }) else { return false }
        return pthread_equal(id, pthread_self()) != 0
    }

    func shutdown() {
        state.withLock { $0.stopping = true }
        wakeUp.signal()
    }

    func runLoop() {
        guard
            let executor = state.withLock({ state -> UnownedSerialExecutor? in
                state.thread = pthread_self()
                return state.executor
            })
        else { return }
        while true {
            wakeUp.wait()
            let (job, done) = state.withLock { state -> (UnownedJob?, Bool) in
                guard state.head < state.jobs.count else { return (nil, state.stopping) }
                let job = state.jobs[state.head]
                state.head += 1
                if state.head == state.jobs.count {
                    state.jobs.removeAll(keepingCapacity: true)
                    state.head = 0
                }
                return (job, false)
            }
            if let job { job.runSynchronously(on: executor) } else if done { return }
        }
    }
}
