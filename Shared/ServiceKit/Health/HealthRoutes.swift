import BusCore
import Hummingbird
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

/// `/healthz`, `/readyz` and `/metrics` as a Hummingbird router. Everything they touch is
/// synchronous and lock-protected (the readiness cache, the Prometheus registry), so an answer
/// never waits on the service's own work. Every answer says `Cache-Control: no-store`; another
/// method on these paths is 405 with `Allow: GET` (HEAD is answered as GET), any other path 404,
/// both with a small JSON body (`{"error":"not found"}`).
struct HealthRoutes: Sendable {
    let identity: ServiceIdentity
    let readiness: ReadinessCache
    let metrics: PrometheusCollectorRegistry

    static let paths = ["/healthz", "/readyz", "/metrics"]

    func router() -> Router<BasicRequestContext> {
        let router = Router(options: .autoGenerateHeadEndpoints)
        router.add(middleware: HealthErrors())
        router.get("/healthz") { _, _ in health() }
        router.get("/readyz") { _, _ in
            let snapshot = readiness.snapshot
            return Self.response(snapshot.isReady ? .ok : .serviceUnavailable, contentType: "application/json", body: snapshot.json)
        }
        router.get("/metrics") { _, _ in
            Self.response(.ok, contentType: MetricsBootstrap.contentType, body: MetricsBootstrap.exposition(of: metrics))
        }
        return router
    }

    /// Alive as long as the server can answer: `{"status":"ok","service":…,"version":…,"uptimeSeconds":…}`.
    private func health() -> Response {
        let uptime = ContinuousClock.now - identity.startedAt
        return Self.response(
            .ok, contentType: "application/json",
            body: JSONString.object([
                ("status", JSONString.quoted("ok")),
                ("service", JSONString.quoted(identity.name)),
                ("version", JSONString.quoted(identity.version)),
                ("uptimeSeconds", String(uptime.components.seconds)),
            ]))
    }

    static func response(_ status: HTTPResponse.Status, contentType: String, body: String, allow: String? = nil) -> Response {
        var headers: HTTPFields = [.contentType: contentType, .cacheControl: "no-store"]
        if let allow { headers[.allow] = allow }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// The small JSON error body of a 404 or 405.
    static func error(_ status: HTTPResponse.Status, allow: String? = nil) -> Response {
        response(
            status, contentType: "application/json", body: JSONString.object([("error", JSONString.quoted(status.reasonPhrase.lowercased()))]),
            allow: allow)
    }
}

/// 405 for another method on a health path, 404 for any other path: in the same JSON shape.
struct HealthErrors: RouterMiddleware {
    typealias Context = BasicRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if HealthRoutes.paths.contains(request.uri.path), request.method != .get, request.method != .head {
            return HealthRoutes.error(.methodNotAllowed, allow: "GET")
        }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            return HealthRoutes.error(.notFound)
        }
    }
}
