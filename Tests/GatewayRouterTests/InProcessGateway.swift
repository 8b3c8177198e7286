import Foundation
import GatewayAssembly
import Hummingbird
import HummingbirdTesting
import Logging

@testable import GatewayService
@testable import ServiceKit

/// The gateway's real router (``GatewayApplication/makeRouter``) driven in process through
/// HummingbirdTesting's `.router` framework: no HTTP server, no socket. Its ``ServiceClients``
/// have no backend connected, so every answer these tests see is decided by the gateway itself
/// before a service is asked, or is the documented `503` (with `Retry-After`) of a backend that
/// is not there.
enum InProcessGateway {
    /// The settings every in-process router uses: every route served (the optional operational
    /// ones included), the anon key's secret set, the defaults otherwise.
    static let environment: [String: String] = [
        "HEALTH_PORT": "0", "GATEWAY_JWT_SECRET": String(repeating: "k", count: 40), "GATEWAY_PUBLIC_OPERATIONS": "true",
    ]

    /// One runtime and its settings for every router of the target (a runtime holds the metrics
    /// registry the routes count into; nothing of it runs here).
    private static let shared = Result { () throws -> (ServiceRuntime, GatewayProcessSettings) in
        let environment = EnvironmentReader(Self.environment)
        let configuration = try CommonConfiguration(environment: environment, defaultHealthPort: 0)
        let logger = Logger(label: "gateway-router-tests") { _ in SwiftLogNoOpLogHandler() }
        let runtime = ServiceRuntime(name: "gateway", configuration: configuration, logger: logger, metrics: MetricsBootstrap.bootstrap())
        return (runtime, try GatewayProcessSettings(environment: environment))
    }

    /// The process settings every in-process router is made with (the modules among them).
    static func settings() throws -> GatewayProcessSettings { try shared.get().1 }

    /// A fresh router (its own rate limits) with its catalog, made the way `GatewayApplication.configure` makes it.
    static func make() throws -> (router: Router<GatewayContext>, catalog: RouteCatalog) {
        let (runtime, settings) = try shared.get()
        let catalog = RouteCatalog()
        let router = GatewayApplication.makeRouter(
            runtime: runtime, settings: settings.core, modules: settings.modules, services: ServiceClients(clients: [:], timeout: .seconds(1)),
            sessions: SessionVerifier(maximumStaleness: .seconds(5)), catalog: catalog)
        return (router, catalog)
    }

    /// Runs `body` against a fresh router (its own rate limits) in HummingbirdTesting's `.router` mode.
    static func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let (router, _) = try make()
        let app = Application(router: router, logger: Logger(label: "gateway-router-tests") { _ in SwiftLogNoOpLogHandler() })
        try await app.test(.router) { client in try await body(client) }
    }
}
