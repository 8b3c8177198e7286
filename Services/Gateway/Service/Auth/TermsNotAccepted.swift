import Foundation
import HTTPTypes
import Hummingbird

/// The refusal of a route that needs the terms in effect accepted (``TermsGate``): `403` with the
/// stable code `terms_not_accepted` and the version to accept, in the error body of the route's
/// family, and that version in `X-Compass-Terms-Version` on every family:
///
/// - native: `{"error": "terms_not_accepted", "message", "details": {"documentType":
///   "terms_of_service", "currentVersion"}, "currentVersion", "requestId"}`;
/// - PostgREST: `{"code": "PGRST-terms_not_accepted", "message", "details": "currentVersion=…", "hint"}`;
/// - Storage: `{"statusCode": "403", "error": "terms_not_accepted", "message"}`;
/// - seed: `{"error": message}`.
///
/// Like `rate_limited`, the code is the gateway's own refusal, outside the bus's closed set.
struct TermsNotAccepted: Error, Sendable, Equatable {
    /// The terms version in effect, the one to accept.
    let currentVersion: String

    static let code = "terms_not_accepted"
    static let versionHeader = HTTPField.Name("X-Compass-Terms-Version")!

    var message: String {
        "accept the terms of service in effect (version \(currentVersion)) to use this: read them at GET /api/terms, accept with "
            + "POST /api/me/consents/terms_of_service/accept"
    }

    func response(style: ErrorStyle, requestID: String) -> Response {
        var response: Response
        switch style {
        case .postgrest:
            response = PostgRESTError(
                status: .forbidden, code: "PGRST-" + Self.code, message: message, details: "currentVersion=\(currentVersion)",
                hint: "accept the terms in effect, then retry"
            ).response()
        case .onboarding:
            response = Self.json(JSONBodies.object(["error": .string(message)]))
        case .storage:
            response = Self.json(JSONBodies.object(["statusCode": .string("403"), "error": .string(Self.code), "message": .string(message)]))
        case .native, .gotrue:  // no /auth/v1 route is gated; the native shape if one ever is
            response = Self.json(
                JSONBodies.object([
                    "error": .string(Self.code), "message": .string(message), "requestId": .string(requestID),
                    "currentVersion": .string(currentVersion),
                    "details": .object(["documentType": .string("terms_of_service"), "currentVersion": .string(currentVersion)]),
                ]))
        }
        response.headers[Self.versionHeader] = currentVersion
        return response
    }

    private static func json(_ body: Data) -> Response {
        Response(status: .forbidden, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
