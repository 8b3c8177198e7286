import Hummingbird
import Locks
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle

/// The HTTP endpoint for orchestrators and scrapers: `GET /healthz`, `GET /readyz`, `GET /metrics`.
///
/// Served by Hummingbird, as the gateway's API is: every process links SwiftNIO anyway (the image
/// ships one multicall binary holding the gateway; ARCHITECTURE.md, "No SwiftNIO in the services'
/// own code, measured"), so a server of our own bought nothing. Every connection lives under the
/// gateway's slow-client deadlines and connection cap (``SlowClientGuard``). The answers are
/// computed from lock-protected state only (the readiness cache, the Prometheus registry), so
/// `/healthz` answers as long as NIO's event loop and the process's executors can run.
///
/// It binds when ``run()`` starts: ``port()`` waits for that (the configured port, or the
/// kernel's pick for 0). ``run()`` serves until graceful shutdown reaches this service or its task
/// is cancelled.
public final class HealthServer: Service, Sendable {
    /// Bounds that keep misbehaving clients from holding the server.
    public struct Limits: Sendable {
        /// Time a client has to send a request's head (from connecting, or the last answer) and
        /// between parts of its body; past it, the connection is closed.
        public var requestTimeout: Duration = .seconds(5)
        /// How long an answer may wait on a client that does not read.
        public var writeTimeout: Duration = .seconds(5)
        /// Connections served at once; one more is closed as soon as it is accepted.
        public var maxConnections = 16
        /// How long a keep-alive connection may sit idle between requests.
        public var idleTimeout: Duration = .seconds(30)

        public init() {}
    }

    /// The host the server binds (numeric or `localhost`).
    public let host: String
    private let requestedPort: Int
    private let routes: HealthRoutes
    private let limits: Limits
    private let logger: Logger
    private let bound = BoundPort()

    /// Nothing is bound or served before ``run()``.
    public init(
        host: String, port: Int, identity: ServiceIdentity, readiness: ReadinessCache,
        metrics: PrometheusCollectorRegistry, limits: Limits = Limits(), logger: Logger
    ) {
        self.host = host
        self.requestedPort = port
        self.routes = HealthRoutes(identity: identity, readiness: readiness, metrics: metrics)
        self.limits = limits
        self.logger = logger
    }

    /// The port served on, once ``run()`` has bound it; the error when it could not bind.
    public func port() async throws -> Int {
        try await bound.value()
    }

    public func run() async throws {
        let guardLimits = SlowClientLimits(
            headerTimeout: limits.requestTimeout, bodyTimeout: limits.requestTimeout, writeTimeout: limits.writeTimeout,
            maximumConnections: limits.maxConnections)
        let connections = ConnectionCount()
        let app = Application(
            router: routes.router(),
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [SlowClientGuard(limits: guardLimits, connections: connections)],
                    idleTimeout: TimeAmount(limits.idleTimeout))),
            configuration: .init(address: .hostname(host, port: requestedPort), serverName: nil),
            onServerRunning: { [bound, requestedPort] channel in bound.resolve(channel.localAddress?.port ?? requestedPort) },
            logger: logger)
        do {
            try await app.run()
        } catch {
            bound.fail(error)
            throw error
        }
        bound.fail(CancellationError())
        logger.debug("health server stopped")
    }
}

/// The port a server bound, for whoever asks before or after it is known.
final class BoundPort: Sendable {
    private enum State {
        case waiting([CheckedContinuation<Int, any Error>])
        case bound(Int)
        case failed(any Error)
    }

    private let state = LockedValue(State.waiting([]))

    func value() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<Int, any Error>? = state.withLock { state in
                switch state {
                case .waiting(let waiters):
                    state = .waiting(waiters + [continuation])
                    return nil
                case .bound(let port): return .success(port)
                case .failed(let error): return .failure(error)
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    func resolve(_ port: Int) { settle(.success(port)) }

    /// Fails whoever waits; a port already bound stays known.
    func fail(_ error: any Error) { settle(.failure(error)) }

    private func settle(_ result: Result<Int, any Error>) {
        let waiters: [CheckedContinuation<Int, any Error>] = state.withLock { state in
            guard case .waiting(let waiters) = state else { return [] }
            switch result {
            case .success(let port): state = .bound(port)
            case .failure(let error): state = .failed(error)
            }
            return waiters
        }
        for waiter in waiters { waiter.resume(with: result) }
    }
}
