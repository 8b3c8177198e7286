import Foundation
import HTTPTypes
import Hummingbird

/// Responses made of a ``LegalText``'s ready bodies: `304` when `If-None-Match` already holds the
/// version's entity tag (as before the cache existed), and the stale marker.
///
/// Stale: when the gateway serves texts it could not confirm with Legal lately (Legal down or
/// unreachable, or the last revalidation failed), it says so with `X-Compass-Stale: true` on
/// the `200` and the `304` alike. The texts are still the last ones Legal published as far as the
/// gateway knows; clients may show them as usual. (`Warning: 110` would say the same, but
/// RFC 9111 retired the `Warning` header.)
package enum LegalResponses {
    package static let staleHeader = HTTPField.Name("X-Compass-Stale")!
    static let json = "application/json; charset=utf-8"
    static let html = "text/html; charset=utf-8"

    /// `body` as `contentType` with `headers`, or `304` with the same headers when `tag` is set and
    /// `If-None-Match` matches it.
    static func respond(
        _ request: Request, body: ByteBuffer, contentType: String, headers: HTTPFields = [:], tag: String? = nil, stale: Bool
    ) -> Response {
        var headers = headers
        if stale { headers[staleHeader] = "true" }
        if let tag, let held = request.headers[.ifNoneMatch], LegalRoutes.matches(held, tag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }
}
