import Foundation
import Hummingbird
import ServiceKit

/// `/healthz` (the process answers), `/readyz` (every bus peer connected; 503 otherwise and during
/// shutdown) and `/metrics` (Prometheus text) on the gateway's HTTP port. They read what the
/// ServiceKit runtime keeps, which also serves them on `HEALTH_PORT` like every service.
struct OperationalRoutes {
    let runtime: ServiceRuntime

    func register(on router: Router<GatewayContext>, catalog: RouteCatalog) {
        catalog.add(router, .get, "/healthz", "Liveness: the process answers.", public: true) { _, _ in
            try JSONBodies.response(["status": "ok", "service": runtime.identity.name, "version": runtime.identity.version])
        }
        catalog.add(router, .get, "/readyz", "Readiness: every bus peer is connected.", public: true) { _, _ in
            let snapshot = runtime.readiness.snapshot
            struct Body: Encodable { let ready: Bool; let status: String; let checks: [String: String] }
            let body = Body(ready: snapshot.isReady, status: snapshot.phase.rawValue, checks: snapshot.checks.mapValues(\.description))
            return try JSONBodies.response(body, status: snapshot.isReady ? .ok : .serviceUnavailable)
        }
        catalog.add(router, .get, "/metrics", "Prometheus metrics (text exposition 0.0.4).", public: true) { _, _ in
            Response(
                status: .ok, headers: [.contentType: MetricsBootstrap.contentType],
                body: .init(byteBuffer: ByteBuffer(string: MetricsBootstrap.exposition(of: runtime.metrics))))
        }
    }
}
