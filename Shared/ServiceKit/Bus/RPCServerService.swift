import Bus
import ServiceLifecycle

/// Runs an ``RPCServer`` as a lifecycle `Service`: binds on `run()`, serves until graceful
/// shutdown, then lets running handlers finish (their replies go out) before closing.
public struct RPCServerService: Service {
    public let server: RPCServer

    public init(_ server: RPCServer) { self.server = server }

    public func run() async throws {
        try await server.start()
        try? await gracefulShutdown()
        await server.shutdown()
    }
}
