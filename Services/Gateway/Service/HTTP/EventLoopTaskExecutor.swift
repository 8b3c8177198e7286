import NIOCore
import ServiceLifecycle

/// Runs the jobs of the tasks that prefer it (SE-0417) on NIO's event loops: the loop of the
/// thread that enqueues the job when that thread is a loop, else the next loop of `group`.
///
/// The HTTP server runs under it (``EventLoopPreferringService``), so a request's task runs on
/// the loop that read its bytes: it is resumed there by its own channel, and writes its answer
/// there without a hand-off. On the cooperative pool, each request changed threads twice (the
/// loop woke a pool thread with the request, the pool woke the loop with the answer). A job
/// enqueued from the loop itself is queued without waking anything; one enqueued from another
/// thread (a bus socket resuming a caller, a timer) wakes the chosen loop, which is why the
/// acceptance batch resumes its waiters with one job per loop (``AcceptanceBatcher``) and why
/// only the HTTP server prefers the loops: making them Swift's global executor sent every bus
/// reply through a loop's wake-up, and was slower (BENCHMARKS, "Designs tried and dropped").
///
/// Handlers must never block, here as on the cooperative pool: a blocked loop holds every
/// connection on it.
final class EventLoopTaskExecutor: TaskExecutor {
    /// The HTTP server's loops (Hummingbird's `Application.eventLoopGroup`).
    let group: any EventLoopGroup

    init(group: any EventLoopGroup) {
        self.group = group
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // `any()`: the calling thread's loop when it is one of the group's, else the next one.
        group.any().execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// A service whose whole run (and every child task it starts, such as Hummingbird's one per
/// connection) prefers `executor`.
struct EventLoopPreferringService<Wrapped: Service>: Service, CustomStringConvertible {
    let wrapped: Wrapped
    let executor: EventLoopTaskExecutor

    var description: String { "\(Wrapped.self) on the event loops" }

    func run() async throws {
        try await withTaskExecutorPreference(executor) { try await wrapped.run() }
    }
}
