import Foundation
import Hummingbird
import ServiceKit

/// `GET /openapi.json`: the OpenAPI document of every route in the catalog (itself included),
/// built once on first request, after every route is registered.
package struct OpenAPIRoutes {
    let catalog: RouteCatalog
    let version: String
    /// The route modules' summaries, for the description.
    let modules: [String]

    func register(on family: RouteFamily) {
        family.add(.get, "/openapi.json", "This OpenAPI 3 document.", public: true) { [catalog, version, modules] _, _ in
            let document = OpenAPIDocument.build(catalog.all, version: version, modules: modules)
            return try JSONBodies.response(document)
        }
    }
}
