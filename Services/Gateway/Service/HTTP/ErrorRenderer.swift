import Bus
import Contracts
import HTTPTypes
import Hummingbird

/// The name of an error body's shape (`native`, `onboarding`, and those route modules add:
/// `postgrest`, `storage`, `gotrue`): what the route catalog records per route and the tests
/// check answers against. Open, like `HTTPField.Name`: a module declares its own.
package struct ErrorFormat: Hashable, Sendable, CustomStringConvertible {
    let name: String
    package var description: String { name }

    /// A route module's format, by a name no other family uses.
    package init(name: String) { self.name = name }

    /// `{"error": "<code>", "message", "details": {…}, "requestId"}`, `error` one of the bus's
    /// closed set of codes (`invalid_argument`, `not_found`, …) or a gateway refusal.
    static let native = ErrorFormat(name: "native")
    /// The app's onboarding routes (seed 004's client): `{"error": "<message>"}`, shown as is.
    static let onboarding = ErrorFormat(name: "onboarding")
}

/// How one family of routes writes its errors. The gateway's core knows two formats
/// (``NativeErrors``, ``OnboardingErrors``); a route module that speaks another API brings its
/// own renderer and hands it to its ``RouteFamily`` (the Supabase layer: PostgREST, Storage and
/// GoTrue bodies), so the core never looks at which module a request is for.
///
/// ``ErrorResponses`` decides what was thrown (a bus error, a rate limit, the terms gate) and the
/// status and headers every format shares; the renderer writes the body in its format.
package protocol ErrorRenderer: Sendable {
    var format: ErrorFormat { get }
    /// Anything else a route threw, as the bus error it stands for, with the status and the
    /// headers (`Content-Type`, `WWW-Authenticate`, `Retry-After`) the core worked out.
    func response(to error: BusError, status: HTTPResponse.Status, headers: HTTPFields, requestID: String) -> Response
    /// 429: the gateway's own refusal (`rate_limited`); the core adds `Retry-After`.
    func response(to refusal: RateLimited, requestID: String) -> Response
    /// 403: the terms in effect are not accepted (`terms_not_accepted`); the core adds the
    /// version header.
    func response(to refusal: TermsNotAccepted, requestID: String) -> Response
    /// The OpenAPI schema of this format's error body (inline, or a `$ref` into ``openAPIComponents``).
    var openAPISchema: JSONValue { get }
    /// The named schemas ``openAPISchema`` refers to.
    var openAPIComponents: [String: JSONValue] { get }
}

/// An error that carries its whole answer in the format of the API that throws it (a PostgREST
/// error from `/rest/v1`, GoTrue's from `/auth/v1`, tus's 412): answered as it is, whatever the
/// family.
package protocol RenderedError: Error {
    func response(requestID: String) -> Response
}

extension ErrorRenderer {
    /// A JSON response of `status` with `body`.
    package static func json(_ status: HTTPResponse.Status, _ body: [String: JSONValue], headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: JSONBodies.object(body))))
    }
}
