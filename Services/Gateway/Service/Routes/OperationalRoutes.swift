import Foundation
import Hummingbird
import ServiceKit

/// `/healthz` (the process answers) on the gateway's HTTP port; with `GATEWAY_PUBLIC_OPERATIONS`
/// also `/readyz` (some backend connected; 503 when none is and during shutdown) and `/metrics`
/// (Prometheus text). All three read what the ServiceKit runtime keeps, which serves them on
/// `HEALTH_PORT` like every service: that port is for the orchestrator and the operator, and
/// readiness details and metrics say too much about the system to publish by default.
package struct OperationalRoutes {
    let runtime: ServiceRuntime
    /// Whether `/readyz` and `/metrics` are served here too.
    let includeDetails: Bool

    func register(on family: RouteFamily) {
        family.add(.get, "/healthz", "Liveness: the process answers.", public: true) { _, _ in
            try JSONBodies.response(["status": "ok", "service": runtime.identity.name, "version": runtime.identity.version])
        }
        guard includeDetails else { return }
        family.add(.get, "/readyz", "Readiness: some backend is connected (each one's state in checks).", public: true) { _, _ in
            let snapshot = runtime.readiness.snapshot
            struct Body: Encodable {
                let ready: Bool
                let status: String
                let checks: [String: String]
            }
            let body = Body(ready: snapshot.isReady, status: snapshot.phase.rawValue, checks: snapshot.checks.mapValues(\.description))
            return try JSONBodies.response(body, status: snapshot.isReady ? .ok : .serviceUnavailable)
        }
        family.add(.get, "/metrics", "Prometheus metrics (text exposition 0.0.4).", public: true, docs: RouteDocs(answer: .text)) { _, _ in
            Response(
                status: .ok, headers: [.contentType: MetricsBootstrap.contentType],
                body: .init(byteBuffer: ByteBuffer(string: MetricsBootstrap.exposition(of: runtime.metrics))))
        }
    }
}
