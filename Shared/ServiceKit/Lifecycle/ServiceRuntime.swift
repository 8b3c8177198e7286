import Locks
import Logging
import Prometheus
import ServiceLifecycle

/// The components every service runs, assembled into one `ServiceGroup`: the health server, the
/// readiness poller, and the services the caller adds (RPC server, outbox relay, …).
///
/// Services start in the order they are added, after the health server and the poller. Graceful
/// shutdown runs in reverse: readiness turns 503 first, then the caller's services stop from the
/// last added to the first, then the poller, and the health server last, so `/healthz` answers
/// until the very end.
///
/// ``ServiceMain`` builds one from the environment; tests build one directly with port 0.
public final class ServiceRuntime: Sendable {
    public let identity: ServiceIdentity
    public let configuration: CommonConfiguration
    /// The service's root logger; pass it (or children of it) to libraries.
    public let logger: Logger
    /// The Prometheus registry `/metrics` renders.
    public let metrics: PrometheusCollectorRegistry
    public let readiness: ReadinessCache
    public let healthServer: HealthServer
    private let registrations = LockedValue(Registrations())

    private struct Registrations {
        var checks: [ReadinessCheck] = []
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        var groupMade = false
    }

    /// Nothing binds or runs before ``run()`` (or the group ``makeServiceGroup(handlingSignals:)`` makes).
    public init(
        name: String, configuration: CommonConfiguration, logger: Logger, metrics: PrometheusCollectorRegistry,
        healthLimits: HealthServer.Limits = HealthServer.Limits()
    ) {
        self.identity = ServiceIdentity(name: name, version: configuration.version)
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        self.readiness = ReadinessCache()
        self.healthServer = HealthServer(
            host: configuration.health.host, port: configuration.health.port, identity: identity,
            readiness: readiness, metrics: metrics, limits: healthLimits, logger: logger)
    }

    /// The port `/healthz`, `/readyz` and `/metrics` are served on, once the group runs and the
    /// health server has bound it (the configured one, or the kernel's pick for 0); the error when it
    /// could not bind.
    public func healthPort() async throws -> Int { try await healthServer.port() }

    /// Adds a check that must pass for `/readyz` to answer 200.
    public func addReadinessCheck(_ check: ReadinessCheck) {
        register { $0.checks.append(check) }
    }

    /// Adds a check that passes when `body` returns and fails with the error's description when it throws.
    public func addReadinessCheck(_ name: String, _ body: @escaping @Sendable () async throws -> Void) {
        addReadinessCheck(ReadinessCheck(name, throwing: body))
    }

    /// Adds a service to run beside the health server. When it returns or throws, the whole group
    /// shuts down gracefully (a service that stops on its own leaves the process unable to do its job).
    public func addService(_ service: some Service) {
        register {
            $0.services.append(
                .init(
                    service: service, successTerminationBehavior: .gracefullyShutdownGroup,
                    failureTerminationBehavior: .gracefullyShutdownGroup))
        }
    }

    /// Adds a service with its own termination behaviours.
    public func addService(_ configuration: ServiceGroupConfiguration.ServiceConfiguration) {
        register { $0.services.append(configuration) }
    }

    /// The group of all components. Made once: registering afterwards is a programming error.
    /// - Parameter handlingSignals: whether SIGTERM and SIGINT start a graceful shutdown. Off in tests,
    ///   which call `triggerGracefulShutdown()` or cancel instead; on in ``run()``.
    public func makeServiceGroup(handlingSignals: Bool = false) -> ServiceGroup {
        let registered = registrations.withLock { registrations in
            precondition(!registrations.groupMade, "ServiceRuntime.makeServiceGroup called twice")
            registrations.groupMade = true
            return registrations
        }
        let poller = ReadinessPoller(
            checks: registered.checks, cache: readiness, interval: configuration.readinessInterval,
            timeout: configuration.readinessTimeout, logger: logger)
        // Last, so graceful shutdown reaches it first: `/readyz` turns 503 while the others drain.
        let announcer = CloseOnShutdown(name: "shutdown announcer") { [readiness, logger] in
            readiness.markShuttingDown()
            logger.info("shutting down")
        }
        let services: [ServiceGroupConfiguration.ServiceConfiguration] =
            [.init(service: healthServer), .init(service: poller)] + registered.services + [.init(service: announcer)]
        var group = ServiceGroupConfiguration(services: services, logger: logger)
        if handlingSignals { group.gracefulShutdownSignals = [.sigterm, .sigint] }
        group.maximumGracefulShutdownDuration = configuration.shutdownTimeout
        return ServiceGroup(configuration: group)
    }

    /// Runs every component until SIGTERM or SIGINT, then shuts down gracefully and returns.
    public func run() async throws {
        try await makeServiceGroup(handlingSignals: true).run()
    }

    private func register(_ change: (inout Registrations) -> Void) {
        registrations.withLock { registrations in
            precondition(!registrations.groupMade, "register readiness checks and services before the group is made")
            change(&registrations)
        }
    }
}
