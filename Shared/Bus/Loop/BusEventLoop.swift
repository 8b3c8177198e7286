import CZeroMQ
import Foundation
import Locks
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The process's one event loop thread (`BUS_EVENT_LOOP=single`): it polls every ZeroMQ socket
/// of the process (each a ``SocketDriver``) and runs the jobs of the tasks that prefer it, as their
/// `TaskExecutor` (SE-0417), and of the actors that name it as their `SerialExecutor`. A request's
/// bytes, its handler and the caller it wakes then stay on one thread: no hand-off between a socket
/// thread and the cooperative pool on the way in or out.
///
/// Everything that runs here must not block: a job that waits stalls every socket of the process.
/// Long CPU work (signing a page, encoding a big document) leaves the loop for the global executor:
/// `withTaskExecutorPreference(globalConcurrentExecutor) { … }`.
///
/// Each turn runs the jobs queued before it began, then turns every driver (flush queued sends,
/// receive what waits, deliver it), and sleeps in one `poll` over every socket's descriptors and
/// the loop's eventfd only when no driver has work and nothing was queued (``LoopWaker``).
public final class BusEventLoop: TaskExecutor, SerialExecutor, Sendable {
    let waker: LoopWaker
    private let queue = LockedValue<[Work]>([])
    private let thread = LockedValue<pthread_t?>(nil)

    /// What other threads hand the loop.
    enum Work: Sendable {
        case job(UnownedJob)
        case register(Registration)
    }

    /// A socket to open on the loop: built by `setup` on the loop's thread, then polled there.
    struct Registration: Sendable {
        var loop: SocketLoop
        var policy: BlockedSendPolicy
        var logger: Logger
        var callbacks: LoopCallbacks
        var setup: @Sendable (LoopSockets) throws -> Void
        var started: CheckedContinuation<Void, any Error>
    }

    private static let sharedLoop = LockedValue<BusEventLoop?>(nil)

    /// The process's loop, its thread started on first use.
    public static func shared() throws -> BusEventLoop {
        try sharedLoop.withLock { shared in
            if let shared { return shared }
            let loop = try BusEventLoop(name: "bus-event-loop")
            shared = loop
            return loop
        }
    }

    /// The process's loop if ``BusEventLoopMode/current`` is `single`: the executor request
    /// handlers and their callers prefer.
    public static var preferred: BusEventLoop? {
        BusEventLoopMode.current == .single ? try? shared() : nil
    }

    /// Starts a loop of its own, besides the process's (a benchmark playing two processes in one).
    /// `name` names its thread for `top -H` and `perf` (15 bytes are kept). The thread runs as long
    /// as the process: make a loop once, not per socket.
    public init(name: String) throws {
        waker = try LoopWaker()
        let thread = Thread { [self] in run(name: name) }
        // Handlers run here, with their synchronous work (JSON of large payloads, nested decoding)
        // on this stack: as much as a pool thread's, not a small helper thread's.
        thread.stackSize = 8 << 20
        thread.start()
    }

    // MARK: Executor

    public func enqueue(_ job: consuming ExecutorJob) {
        hand(.job(UnownedJob(job)))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() {
        precondition(isCurrent, "not running on the bus event loop's thread")
    }

    /// Whether the caller runs on the loop's thread.
    public var isCurrent: Bool {
        guard let id = thread.withLock({ $0 }) else { return false }
        return pthread_equal(id, pthread_self()) != 0
    }

    func register(_ registration: Registration) { hand(.register(registration)) }

    private func hand(_ work: Work) {
        queue.withLock { $0.append(work) }
        waker.wakeIfSleeping()
    }

    // MARK: The loop's thread

    private func run(name: String) {
        nameThisThread(name)
        thread.withLock { $0 = pthread_self() }
        var drivers = Drivers(wakeupFD: waker.signal.fd)
        var work: [Work] = []
        let (serial, task) = (asUnownedSerialExecutor(), asUnownedTaskExecutor())
        while true {
            queue.withLock { if !$0.isEmpty { swap(&$0, &work) } }
            for item in work {
                switch item {
                case .job(let job): job.runSynchronously(isolatedTo: serial, taskExecutor: task)
                case .register(let registration): drivers.open(registration)
                }
            }
            work.removeAll(keepingCapacity: true)
            guard let timeoutMs = drivers.turnAll() else { continue }
            waker.sleeping.store(true, ordering: .sequentiallyConsistent)
            if !queue.withLock({ $0.isEmpty }) || drivers.haveQueuedWork {
                waker.sleeping.store(false, ordering: .sequentiallyConsistent)
                continue
            }
            drivers.sleep(timeoutMs: timeoutMs)
            waker.sleeping.store(false, ordering: .sequentiallyConsistent)
            if drivers.wakeupReady { waker.signal.drain() }
        }
    }
}
