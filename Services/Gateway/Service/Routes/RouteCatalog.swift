import Hummingbird
import Locks

/// Every route the gateway serves, recorded as it is registered, so `/openapi.json` is built
/// from the same list the router uses and a test can check that nothing is missing from it.
public final class RouteCatalog: Sendable {
    public struct Entry: Sendable, Equatable {
        public let method: String
        /// Hummingbird's form (`/api/users/:id/accept-tos`).
        public let path: String
        public let summary: String
        public let isPublic: Bool
    }

    private let entries = LockedValue<[Entry]>([])

    public init() {}

    public var all: [Entry] { entries.withLock { $0 } }

    func add(
        _ router: Router<GatewayContext>, _ method: HTTPRequest.Method, _ path: String, _ summary: String, public isPublic: Bool,
        _ handler: @escaping @Sendable (Request, GatewayContext) async throws -> Response
    ) {
        entries.withLock { $0.append(Entry(method: method.rawValue, path: path, summary: summary, isPublic: isPublic)) }
        router.on(RouterPath(path), method: method) { request, context in try await handler(request, context) }
    }
}
