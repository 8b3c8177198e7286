import Logging
import ServiceLifecycle

/// Runs the registered ``ReadinessCheck``s every ``interval`` and stores the results in a
/// ``ReadinessCache``, so `/readyz` answers from memory and never bridges into async code.
///
/// Checks of one round run concurrently, each bounded by ``timeout``. Changes of readiness are
/// logged. On graceful shutdown the cache is marked shutting down (not ready) and the poller returns.
public struct ReadinessPoller: Service {
    public let interval: Duration
    public let timeout: Duration
    private let runners: [CheckRunner]
    private let cache: ReadinessCache
    private let logger: Logger

    public init(
        checks: [ReadinessCheck], cache: ReadinessCache, interval: Duration = .seconds(1),
        timeout: Duration = .seconds(2), logger: Logger
    ) {
        self.runners = checks.map(CheckRunner.init)
        self.cache = cache
        self.interval = interval
        self.timeout = timeout
        self.logger = logger
    }

    public func run() async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await pollOnce()
                try? await Task.sleep(for: interval)
            }
        }
        cache.markShuttingDown()
    }

    /// Runs every check once and publishes the round.
    func pollOnce() async {
        let timeout = self.timeout
        let results = await withTaskGroup(of: (String, ReadinessStatus).self) { group in
            for runner in runners {
                group.addTask { (runner.check.name, await runner.evaluate(timeout: timeout)) }
            }
            var results: [String: ReadinessStatus] = [:]
            for await (name, status) in group { results[name] = status }
            return results
        }
        guard !Task.isCancelled else { return }  // a cancelled round says nothing about the dependencies
        let previous = cache.update(checks: results)
        let current = cache.snapshot
        if previous.isReady != current.isReady || (previous.phase == .starting && current.phase == .running) {
            let failing = current.checks.filter { $0.value != .ready }.mapValues { Logger.MetadataValue.string($0.description) }
            logger.log(
                level: current.isReady ? .info : .warning, current.isReady ? "ready" : "not ready",
                metadata: failing.isEmpty ? nil : ["checks": .dictionary(failing)])
        }
    }
}
