import Bus
import Contracts
import Foundation
import HTTPTypes
import Hummingbird
import Locks

/// `/legal/privacy` and `/legal/terms`: the documents in effect as HTML pages (see ``LegalPage``),
/// with the digest as `ETag` (`304` on `If-None-Match`), a strict `Content-Security-Policy` and
/// no cookies. Errors on these routes are still JSON.
struct PageRoutes {
    let services: ServiceClients
    /// The last page rendered per type, by digest: a version's text never changes, so it is
    /// rendered once, not on every request.
    let rendered = RenderedPages()

    func register(on router: Router<GatewayContext>, catalog: RouteCatalog) {
        for (path, type) in [("/legal/privacy", LegalDocumentType.privacyPolicy), ("/legal/terms", .termsOfService)] {
            catalog.add(router, .get, path, "The \(type == .privacyPolicy ? "privacy policy" : "terms of service") in effect, as an HTML page.", public: true) { request, context in
                let document = try await services.call(.legal, LegalCurrent.self, .init(type: type), principal: .anonymous, context: context)
                let tag = "\"\(document.summary.digest)\""
                var headers: HTTPFields = [
                    .eTag: tag, .cacheControl: "public, max-age=300",
                    .contentSecurityPolicy: LegalPage.contentSecurityPolicy,
                    HTTPField.Name("X-Content-Type-Options")!: "nosniff",
                    HTTPField.Name("Referrer-Policy")!: "no-referrer",
                    HTTPField.Name("X-Frame-Options")!: "DENY",
                ]
                if let held = request.headers[.ifNoneMatch], LegalRoutes.matches(held, tag) {
                    return Response(status: .notModified, headers: headers)
                }
                headers[.contentType] = "text/html; charset=utf-8"
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html(for: document))))
            }
        }
    }

    func html(for document: LegalDocument) -> String {
        let type = document.summary.type
        if let cached = rendered.pages.withLock({ $0[type] }), cached.digest == document.summary.digest { return cached.html }
        let html = LegalPage.html(for: document)
        rendered.pages.withLock { $0[type] = (document.summary.digest, html) }
        return html
    }
}

/// The rendered-page cache, shared by the route closures.
final class RenderedPages: Sendable {
    let pages = LockedValue<[LegalDocumentType: (digest: String, html: String)]>([:])
}
