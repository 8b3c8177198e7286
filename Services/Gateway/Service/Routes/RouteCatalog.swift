import Hummingbird
import Locks

/// Every route the gateway serves, recorded as its ``RouteFamily`` adds it, so `/openapi.json` is
/// built from the same list the router uses and a test can check that nothing is missing from it.
public final class RouteCatalog: Sendable {
    public struct Entry: Sendable, Equatable {
        public let method: String
        /// Hummingbird's form (`/api/users/:id/accept-tos`), the family's prefix included.
        public let path: String
        public let summary: String
        public let isPublic: Bool
        /// How the route's family writes its errors.
        let errors: any ErrorRenderer
        /// What `/openapi.json` says of it beyond the rest.
        let docs: RouteDocs

        public static func == (a: Entry, b: Entry) -> Bool {
            a.method == b.method && a.path == b.path && a.summary == b.summary && a.isPublic == b.isPublic
                && a.errors.format == b.errors.format
        }
    }

    private let entries = LockedValue<[Entry]>([])

    public init() {}

    public var all: [Entry] { entries.withLock { $0 } }

    func record(
        _ method: HTTPRequest.Method, _ path: String, _ summary: String, public isPublic: Bool, errors: any ErrorRenderer, docs: RouteDocs
    ) {
        entries.withLock {
            $0.append(Entry(method: method.rawValue, path: path, summary: summary, isPublic: isPublic, errors: errors, docs: docs))
        }
    }
}
