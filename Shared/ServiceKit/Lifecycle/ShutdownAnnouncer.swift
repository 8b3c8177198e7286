import Logging
import ServiceLifecycle

/// The last service of a runtime's group, and so the first one graceful shutdown reaches: it marks
/// the service not ready at once, so `/readyz` turns 503 while the other services drain, then returns.
struct ShutdownAnnouncer: Service {
    let readiness: ReadinessCache
    let logger: Logger

    func run() async {
        try? await gracefulShutdown()  // returns on shutdown, throws on cancellation: both mean stop
        readiness.markShuttingDown()
        logger.info("shutting down")
    }
}
