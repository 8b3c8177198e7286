import GatewayAssembly
import Logging

@testable import GatewayService
@testable import ServiceKit

/// The gateway's ``RouteCatalog`` as the router registers it (the list `/openapi.json` is built
/// from), made in-process without connecting to any service: the isolation walk is checked
/// against it, so a route added later cannot escape the walk unnoticed.
enum RouteCatalogSnapshot {
    /// `"METHOD /hummingbird/:path"` → whether the route is public.
    static func routes() throws -> [String: Bool] {
        let environment = EnvironmentReader([
            "HEALTH_PORT": "0", "GATEWAY_JWT_SECRET": String(repeating: "k", count: 40),
            // Every route the gateway can serve, the optional operational ones included.
            "GATEWAY_PUBLIC_OPERATIONS": "true",
        ])
        let configuration = try CommonConfiguration(environment: environment, defaultHealthPort: 0)
        let logger = Logger(label: "route-catalog") { _ in SwiftLogNoOpLogHandler() }
        let runtime = ServiceRuntime(name: "gateway", configuration: configuration, logger: logger, metrics: MetricsBootstrap.bootstrap())
        let settings = try GatewayProcessSettings(environment: environment)
        let catalog = RouteCatalog()
        _ = GatewayApplication.makeRouter(
            runtime: runtime, settings: settings.core, modules: settings.modules, services: ServiceClients(clients: [:], timeout: .seconds(1)),
            sessions: SessionVerifier(maximumStaleness: .seconds(5)), catalog: catalog)
        var routes: [String: Bool] = [:]
        for entry in catalog.all { routes[entry.method + " " + entry.path] = entry.isPublic }
        return routes
    }
}
