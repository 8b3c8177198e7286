import Hummingbird

/// One family of routes (legal, accounts, consent, documents, …): a Hummingbird `RouterGroup`
/// whose middleware is declared once for every route in it, and which records each route in the
/// ``RouteCatalog`` as it is added (the list `/openapi.json` and the tests walk).
///
/// The family's first middleware renders whatever its routes throw in the family's error body
/// (``ErrorRenderingMiddleware``, with the family's ``ErrorRenderer``); what more a set of its routes needs (a sign-in, the terms
/// accepted, a per-address rate limit) is a group inside the family (``group(_:)``,
/// ``authenticated(by:)``, ``signedIn(by:termsAccepted:)``), so every route that goes without it
/// is registered, visibly, outside that group:
///
/// ```swift
/// let accounts = RouteFamily(router, errors: NativeErrors(), catalog: catalog)
/// let signedIn = accounts.signedIn(by: authenticator, termsAccepted: false)
/// signedIn.add(.get, "/api/me", "The signed-in user.", public: false) { request, context in … }
/// accounts.add(.get, "/api/deletion-certificates/:certificateId", "…", public: true) { … }
/// ```
///
/// A family with a `prefix` (`/rest/v1`, `/storage/v1`, `/auth/v1`) takes its routes' paths
/// relative to it, as Hummingbird's `router.group("todos")` does.
package struct RouteFamily {
    let group: RouterGroup<GatewayContext>
    /// Put in front of every path added (empty for families without one).
    let prefix: String
    /// How the family writes its errors.
    let errors: any ErrorRenderer
    let catalog: RouteCatalog

    init(_ router: Router<GatewayContext>, prefix: String = "", errors: any ErrorRenderer, catalog: RouteCatalog) {
        self.init(
            group: router.group(RouterPath(prefix)).add(middleware: ErrorRenderingMiddleware(renderer: errors)), prefix: prefix,
            errors: errors, catalog: catalog)
    }

    private init(group: RouterGroup<GatewayContext>, prefix: String, errors: any ErrorRenderer, catalog: RouteCatalog) {
        self.group = group
        self.prefix = prefix
        self.errors = errors
        self.catalog = catalog
    }

    /// The family's routes that also need `middleware`, which runs after the family's own (so its
    /// refusals come in the family's error body).
    package func group(_ middleware: any MiddlewareProtocol<Request, Response, GatewayContext>) -> RouteFamily {
        RouteFamily(group: group.group().add(middleware: middleware), prefix: prefix, errors: errors, catalog: catalog)
    }

    /// The family's routes that read who the caller is (``GatewayContext/authentication()``):
    /// `Authorization` is resolved once, before them, by ``AuthenticationMiddleware``.
    package func authenticated(by authenticator: Authenticator) -> RouteFamily {
        group(AuthenticationMiddleware(authenticator: authenticator))
    }

    /// The family's routes that act for a signed-in user (``GatewayContext/signedIn()``), and when
    /// `termsAccepted`, one who accepted the terms in effect (``SignedInMiddleware``).
    package func signedIn(by authenticator: Authenticator, termsAccepted: Bool) -> RouteFamily {
        authenticated(by: authenticator).group(SignedInMiddleware(terms: authenticator.terms, termsAccepted: termsAccepted))
    }

    /// Adds the route `method` `path` (relative to ``prefix``), recorded in the catalog with what
    /// `/openapi.json` says of it (``RouteDocs``).
    package func add(
        _ method: HTTPRequest.Method, _ path: String, _ summary: String, public isPublic: Bool, docs: RouteDocs = RouteDocs(),
        _ handler: @escaping @Sendable (Request, GatewayContext) async throws -> Response
    ) {
        catalog.record(method, prefix + path, summary, public: isPublic, errors: errors, docs: docs)
        group.on(RouterPath(path), method: method) { request, context in try await handler(request, context) }
    }
}

/// The first middleware of every family: turns anything the family's routes (and their other
/// middleware) throw into the family's error body (``ErrorResponses``), with the request id the
/// tracing middleware gave the request.
package struct ErrorRenderingMiddleware: RouterMiddleware {
    package typealias Context = GatewayContext
    let renderer: any ErrorRenderer

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return ErrorResponses.response(for: error, renderer: renderer, requestID: context.requestID, logger: context.logger)
        }
    }
}
