import ServiceLifecycle

/// A background job that does its work at start and then every `interval` until graceful
/// shutdown begins: the sweepers that retry what a request left undone (erasures, revocations,
/// unlinks, abandoned uploads). One loop for all of them, so each says only what it sweeps.
///
/// The sleep is cancelled by graceful shutdown, so a service stops at once rather than after its
/// interval; a sweep already running finishes (each sweep is short and resumable by design).
public protocol PeriodicSweep: Service {
    /// How long to wait between the end of one sweep and the start of the next.
    var interval: Duration { get }
    /// One pass; it logs its own failures and never throws, so one bad pass never ends the job.
    func sweep() async
}

extension PeriodicSweep {
    public func run() async throws {
        while !Task.isShuttingDownGracefully {
            await sweep()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
        }
    }
}
