import Foundation
import HTTPTypes
import Hummingbird

/// Cross-origin access for the browser origins listed in `GATEWAY_CORS_ORIGINS` (none by
/// default), so a web page such as seed 002's viewer can call the API with the headers its client
/// sends (the route modules add their clients' headers).
///
/// A request whose `Origin` is listed gets `Access-Control-Allow-Origin` (that origin, never `*`:
/// the API takes credentials), `Vary: Origin` and the exposed headers; a preflight (`OPTIONS` with
/// `Access-Control-Request-Method`) from a listed origin is answered here with 204, the methods,
/// the requested headers when all are allowed, and `Access-Control-Max-Age`. Any other origin gets
/// no CORS header at all (its preflight is a plain 403), so the browser refuses the call. Requests
/// without `Origin` (apps, servers) pass untouched.
///
/// Hummingbird's `CORSMiddleware` is not used: it answers every `OPTIONS` carrying an `Origin`
/// itself (tus' own `OPTIONS` included) and sends the allowed methods and headers to any origin.
package struct CORSPolicy: RouterMiddleware {
    package typealias Context = GatewayContext
    let origins: Set<String>
    /// The request headers a listed origin may send: the core's, then the route modules'.
    let allowedHeaders: [String]
    let allowedHeaderSet: Set<String>
    /// `Access-Control-Expose-Headers`: the core's, then the route modules'.
    let exposedHeaders: String

    static let methods = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"
    /// What the app, browsers and tus clients send for the core's routes, besides the
    /// CORS-safelisted ones.
    static let coreRequestHeaders: [String] = [
        "authorization", "content-type", "range", "if-none-match", "if-match", "idempotency-key", "cache-control", "x-request-id",
        "traceparent", "tus-resumable", "upload-length", "upload-offset", "upload-metadata", "upload-defer-length", "upload-concat", "accept",
        "accept-language", "content-language", "x-requested-with",
    ]
    static let coreExposedHeaders = [
        "Content-Range", "Content-Length", "Content-Disposition", "ETag", "Location", "Retry-After", "X-Request-Id", "Accept-Ranges",
        "Tus-Resumable", "Tus-Version", "Tus-Max-Size", "Tus-Extension", "Upload-Offset", "Upload-Length", "Upload-Metadata", "Upload-Expires",
    ]
    static let requestMethod = HTTPField.Name("Access-Control-Request-Method")!
    static let requestHeaders = HTTPField.Name("Access-Control-Request-Headers")!

    /// `requestHeaders` and `exposedHeaders`: what the route modules' clients send and read.
    init(origins: [String], requestHeaders: [String] = [], exposedHeaders: [String] = []) {
        self.origins = Set(origins.map { Self.normalized($0) })
        var allowed = Self.coreRequestHeaders
        for header in requestHeaders.map({ $0.lowercased() }) where !allowed.contains(header) { allowed.append(header) }
        allowedHeaders = allowed
        allowedHeaderSet = Set(allowed)
        self.exposedHeaders = (Self.coreExposedHeaders + exposedHeaders.filter { !Self.coreExposedHeaders.contains($0) }).joined(separator: ", ")
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin] else {
            // The answer differs by Origin: a cache must not hand this one to a browser's request.
            var response = try await next(request, context)
            response.headers[values: .vary].append("Origin")
            return response
        }
        let allowed = origins.contains(Self.normalized(origin))
        if request.method == .options, request.headers[Self.requestMethod] != nil {
            guard allowed else { return Response(status: .forbidden) }
            return preflight(origin: origin, headers: request.headers[Self.requestHeaders])
        }
        var response = try await next(request, context)
        if allowed {
            response.headers[.accessControlAllowOrigin] = origin
            response.headers[.accessControlExposeHeaders] = exposedHeaders
        }
        response.headers[values: .vary].append("Origin")
        return response
    }

    private func preflight(origin: String, headers: String?) -> Response {
        var fields: HTTPFields = [
            .accessControlAllowOrigin: origin, .accessControlAllowMethods: Self.methods, .accessControlMaxAge: "600", .vary: "Origin",
        ]
        let requested = (headers ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        // The requested headers are echoed when all are allowed; otherwise the list of allowed ones
        // tells the browser (and whoever reads its console) what is missing.
        let names = requested.allSatisfy { allowedHeaderSet.contains($0) } && !requested.isEmpty ? requested : allowedHeaders
        fields[.accessControlAllowHeaders] = names.joined(separator: ", ")
        return Response(status: .noContent, headers: fields)
    }

    /// `scheme://host[:port]` with nothing after it: what a browser sends as `Origin`.
    static func isOrigin(_ text: String) -> Bool {
        guard let url = URLComponents(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme.lowercased()),
            let host = url.host, !host.isEmpty, url.path.isEmpty, url.query == nil, url.fragment == nil, url.user == nil
        else { return false }
        return true
    }

    /// Origins compare case-insensitively in scheme and host (browsers send them lower case).
    static func normalized(_ origin: String) -> String { origin.lowercased() }
}
