import Bus
import Contracts
import Foundation
import HTTPTypes
import Hummingbird

/// `/legal/privacy` and `/legal/terms`: the documents in effect as HTML pages (see ``LegalPage``),
/// with the digest as `ETag` (`304` on `If-None-Match`), a strict `Content-Security-Policy` and
/// no cookies.
///
/// The pages are rendered once per version, when the gateway's copy of the texts (``LegalTexts``)
/// loads it; while Legal is unreachable the last pages are served, marked stale
/// (`X-Compass-Stale: true`). A gateway that never reached Legal has no page to serve: it answers
/// `503` with a short HTML page (and `Retry-After`), since these URLs are opened in browsers
/// (App Store Connect's privacy policy URL), not by API clients.
package struct PageRoutes {
    let services: ServiceClients
    let texts: LegalTexts

    func register(on family: RouteFamily) {
        for (path, type) in [("/legal/privacy", LegalDocumentType.privacyPolicy), ("/legal/terms", .termsOfService)] {
            family.add(
                .get, path, "The \(type == .privacyPolicy ? "privacy policy" : "terms of service") in effect, as an HTML page.", public: true,
                docs: RouteDocs(answer: .page)
            ) { request, context in
                let hit: LegalTexts.Hit
                do {
                    hit = try await texts.current(type, services: services, context: context)
                } catch let error as BusError where error.code == .unavailable || error.code == .deadlineExceeded {
                    context.logger.warning("legal page unavailable: no copy held and Legal unreachable", metadata: ["error": "\(error.message)"])
                    return Self.unavailable(type)
                }
                return LegalResponses.respond(
                    request, body: hit.text.page, contentType: LegalResponses.html, headers: hit.text.pageHeaders, tag: hit.text.entityTag,
                    stale: hit.stale)
            }
        }
    }

    /// `503` as a page a browser shows, for when no text of `type` is held and Legal cannot be asked.
    static func unavailable(_ type: LegalDocumentType) -> Response {
        var headers = headers(tag: "\"unavailable\"")
        headers[.eTag] = nil
        headers[.cacheControl] = "no-store"
        headers[.contentType] = LegalResponses.html
        headers[.retryAfter] = "30"
        return Response(
            status: .serviceUnavailable, headers: headers, body: .init(byteBuffer: ByteBuffer(string: LegalPage.unavailableHTML(for: type))))
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
