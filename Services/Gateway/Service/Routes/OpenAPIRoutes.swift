import Foundation
import Hummingbird
import ServiceKit

/// `GET /openapi.json`: the OpenAPI document of every route in the catalog (itself included),
/// built once on first request, after every route is registered.
struct OpenAPIRoutes {
    let catalog: RouteCatalog
    let version: String

    func register(on family: RouteFamily) {
        family.add(.get, "/openapi.json", "This OpenAPI 3 document.", public: true) { [catalog, version] _, _ in
            let document = OpenAPIDocument.build(catalog.all, version: version)
            return try JSONBodies.response(document)
        }
    }
}
