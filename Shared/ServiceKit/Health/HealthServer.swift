import Foundation
import Locks
import Logging
import Prometheus
import ServiceLifecycle
import SystemCall

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The HTTP endpoint for orchestrators and scrapers: `GET /healthz`, `GET /readyz`, `GET /metrics`.
///
/// A deliberately tiny HTTP/1.1 server on POSIX sockets (services do not link SwiftNIO). It binds
/// when created, so ``port`` is known before ``run()`` (bind to port 0 in tests), and serves from
/// a dedicated thread with a `poll` loop: its blocking calls never occupy the cooperative thread pool,
/// and it keeps answering `/healthz` however busy the service's tasks are. Every response closes
/// the connection.
///
/// ``run()`` serves until the task is cancelled or graceful shutdown reaches this service; it returns
/// after the listening socket is closed.
public final class HealthServer: Service, Sendable {
    /// Bounds that keep misbehaving clients from wedging the server.
    public struct Limits: Sendable {
        /// Time a client has from connecting to finishing its request line and headers.
        public var requestTimeout: Duration = .seconds(5)
        /// Request line plus headers larger than this get `431`.
        public var maxHeaderBytes = 8192
        /// Connections served at once; more wait in the listen backlog.
        public var maxConnections = 16
        /// Time to wait for the client to close after the response, before closing anyway.
        public var lingerTimeout: Duration = .seconds(1)

        public init() {}
    }

    /// The host the socket is bound to.
    public let host: String
    /// The port bound: the configured one, or the kernel's pick when 0 was asked for.
    public let port: Int
    private let listener: LockedValue<Int32?>
    private let routes: HealthRoutes
    private let limits: Limits
    private let logger: Logger

    /// Binds and listens on `host:port` (numeric host or `localhost`). Nothing is served before ``run()``.
    public init(
        host: String, port: Int, identity: ServiceIdentity, readiness: ReadinessCache,
        metrics: PrometheusCollectorRegistry, limits: Limits = Limits(), logger: Logger
    ) throws(SystemCallError) {
        let (descriptor, boundPort) = try TCPListener.open(host: host, port: port)
        self.host = host
        self.port = boundPort
        self.listener = LockedValue(descriptor)
        self.routes = HealthRoutes(identity: identity, readiness: readiness, metrics: metrics)
        self.limits = limits
        self.logger = logger
    }

    deinit {
        if let descriptor = listener.withLock({ $0 }) { closeDescriptor(descriptor) }
    }

    public func run() async throws {
        guard
            let listener = listener.withLock({ descriptor in
                defer { descriptor = nil }
                return descriptor
            })
        else {
            throw SystemCallError(call: "HealthServer.run (already ran)", errorNumber: EBADF)
        }
        var wakePair: [Int32] = [-1, -1]
        do {
            _ = try systemCall("socketpair") { socketpair(AF_UNIX, Self.streamType, 0, &wakePair) }
        } catch {
            closeDescriptor(listener)
            throw error
        }
        let (wakeReader, wakeWriter) = (wakePair[0], wakePair[1])
        defer { closeDescriptor(wakeWriter) }
        logger.debug("health server listening", metadata: ["host": "\(host)", "port": "\(port)"])

        try await withTaskCancellationOrGracefulShutdownHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (routes, limits, logger) = (self.routes, self.limits, self.logger)
                let thread = Thread {
                    var loop = HealthServerLoop(
                        listener: listener, wake: wakeReader, limits: limits, routes: routes, logger: logger)
                    let result = Result { () throws(SystemCallError) in try loop.run() }
                    // Closed before resuming: once run() returns, the port is free.
                    closeDescriptor(listener)
                    closeDescriptor(wakeReader)
                    continuation.resume(with: result.mapError { $0 as any Error })
                }
                thread.name = "health-http"
                thread.start()
            }
        } onCancelOrGracefulShutdown: {
            var byte: UInt8 = 1
            _ = send(wakeWriter, &byte, 1, Int32(MSG_NOSIGNAL))
        }
        logger.debug("health server stopped")
    }

    private static var streamType: Int32 {
        #if canImport(Glibc)
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
            SOCK_STREAM
        #endif
    }
}
