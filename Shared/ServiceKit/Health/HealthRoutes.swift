import BusCore
import Prometheus

/// Who is answering `/healthz`: name, version and when the process started.
public struct ServiceIdentity: Sendable {
    public var name: String
    public var version: String
    public var startedAt: ContinuousClock.Instant

    public init(name: String, version: String, startedAt: ContinuousClock.Instant = .now) {
        self.name = name
        self.version = version
        self.startedAt = startedAt
    }
}

/// Maps a request to `/healthz`, `/readyz` or `/metrics`. Runs on the health server's thread, so
/// everything it touches is synchronous and lock-protected: the readiness cache and the
/// Prometheus registry.
struct HealthRoutes: Sendable {
    let identity: ServiceIdentity
    let readiness: ReadinessCache
    let metrics: PrometheusCollectorRegistry

    func respond(to request: HTTPRequestHead) -> HTTPResponse {
        let known = ["/healthz", "/readyz", "/metrics"]
        guard known.contains(request.path) else { return .error(404) }
        guard request.method == "GET" else { return .error(405, extraHeaders: ["Allow: GET"]) }
        switch request.path {
        case "/healthz": return health()
        case "/readyz":
            let snapshot = readiness.snapshot
            return .json(snapshot.isReady ? 200 : 503, snapshot.json)
        default:
            return HTTPResponse(
                status: 200, contentType: MetricsBootstrap.contentType, body: MetricsBootstrap.exposition(of: metrics))
        }
    }

    /// Alive as long as this thread can answer: `{"status":"ok","service":…,"version":…,"uptimeSeconds":…}`.
    private func health() -> HTTPResponse {
        let uptime = ContinuousClock.now - identity.startedAt
        return .json(
            200,
            JSONString.object([
                ("status", JSONString.quoted("ok")),
                ("service", JSONString.quoted(identity.name)),
                ("version", JSONString.quoted(identity.version)),
                ("uptimeSeconds", String(uptime.components.seconds)),
            ]))
    }
}
