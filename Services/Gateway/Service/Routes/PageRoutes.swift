import Contracts
import Foundation
import HTTPTypes
import Hummingbird

/// `/legal/privacy` and `/legal/terms`: the documents in effect as HTML pages (see ``LegalPage``),
/// with the digest as `ETag` (`304` on `If-None-Match`), a strict `Content-Security-Policy` and
/// no cookies. Errors on these routes are still JSON.
///
/// The pages are rendered once per version, when the gateway's copy of the texts (``LegalTexts``)
/// loads it; while Legal is unreachable the last pages are served, marked stale.
struct PageRoutes {
    let services: ServiceClients
    let texts: LegalTexts

    func register(on router: Router<GatewayContext>, catalog: RouteCatalog) {
        for (path, type) in [("/legal/privacy", LegalDocumentType.privacyPolicy), ("/legal/terms", .termsOfService)] {
            catalog.add(router, .get, path, "The \(type == .privacyPolicy ? "privacy policy" : "terms of service") in effect, as an HTML page.", public: true) { request, context in
                let hit = try await texts.current(type, services: services, context: context)
                return LegalResponses.respond(
                    request, body: hit.text.page, contentType: LegalResponses.html, headers: hit.text.pageHeaders, tag: hit.text.entityTag,
                    stale: hit.stale)
            }
        }
    }

    /// What every answer of a page carries, `304` included.
    static func headers(tag: String) -> HTTPFields {
        [
            .eTag: tag, .cacheControl: "public, max-age=300",
            .contentSecurityPolicy: LegalPage.contentSecurityPolicy,
            HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            HTTPField.Name("Referrer-Policy")!: "no-referrer",
            HTTPField.Name("X-Frame-Options")!: "DENY",
        ]
    }
}
