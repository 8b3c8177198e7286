import Bus
import Contracts
import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import Logging

/// An error as Supabase Auth (GoTrue) answers it, so the Supabase clients raise their own auth
/// errors (`AuthApiError` with its `code`, supabase-swift's `AuthError.api` / `.sessionMissing`).
///
/// GoTrue has two bodies, chosen by the request's `X-Supabase-Api-Version`: from `2024-01-01` on
/// (what current clients send) `{"code": "<error code>", "message": "…"}` with the same header on
/// the response; before it (or without the header) `{"code": <status>, "error_code": "…", "msg": "…"}`.
struct GoTrueError: Error, Sendable {
    let status: HTTPResponse.Status
    /// GoTrue's error code (`validation_failed`, `bad_jwt`, `session_not_found`, …).
    let code: String
    let message: String
    var retryAfterSeconds: Int?

    static let apiVersionHeader = HTTPField.Name("X-Supabase-Api-Version")!
    static let currentAPIVersion = "2024-01-01"

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// Whether the request asks for the 2024-01-01 error body (a `YYYY-MM-DD` at or after it).
    static func wantsVersionedBody(_ request: Request) -> Bool {
        guard let version = request.headers[apiVersionHeader], version.utf8.count == 10,
            version.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") })
        else { return false }
        return version >= currentAPIVersion
    }

    func response(versioned: Bool) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        let body: [String: JSONValue]
        if versioned {
            headers[Self.apiVersionHeader] = Self.currentAPIVersion
            body = ["code": .string(code), "message": .string(message)]
        } else {
            body = ["code": .int(Int64(status.code)), "error_code": .string(code), "msg": .string(message)]
        }
        if let retryAfterSeconds { headers[RateLimited.retryAfterHeader] = String(retryAfterSeconds) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: JSONBodies.object(body))))
    }

    /// GoTrue's counterpart of anything else a route threw: bus and HTTP errors by their status.
    static func from(_ error: any Error, logger: Logger) -> GoTrueError {
        switch error {
        case let error as GoTrueError: return error
        case let limited as RateLimited: return GoTrueError(limited)
        default: return GoTrueError(ErrorResponses.busError(from: error, logger: logger))
        }
    }

    /// 429 `over_request_rate_limit`, with the limit's `Retry-After`.
    init(_ limited: RateLimited) {
        self.init(.tooManyRequests, "over_request_rate_limit", limited.message)
        retryAfterSeconds = limited.retryAfterSeconds
    }

    /// GoTrue's code for a bus error, with the bus's status and message.
    init(_ error: BusError) {
        let code: String =
            switch error.code {
            case .invalidArgument, .payloadTooLarge, .unsupportedMediaType: "validation_failed"
            case .unauthenticated: "no_authorization"
            case .forbidden: "not_admin"
            case .notFound: "user_not_found"
            case .conflict: "conflict"
            case .unavailable: "unexpected_failure"
            case .deadlineExceeded: "request_timeout"
            default: "unexpected_failure"
            }
        self.init(HTTPResponse.Status(code: error.code.httpStatus), code, error.message)
    }
}

/// Answered as it is wherever it is thrown, in the pre-2024 body (the routes' own middleware,
/// ``GoTrueGate``, answers the versioned one when the client asks for it).
extension GoTrueError: RenderedError {
    func response(requestID: String) -> Response { response(versioned: false) }
}

extension ErrorFormat {
    /// Supabase Auth's `{"code", "error_code", "msg"}` under `/auth/v1` (``GoTrueError``).
    static let gotrue = ErrorFormat(name: "gotrue")
}

/// The `/auth/v1` family's errors, in GoTrue's body, so the Supabase clients raise their own auth
/// errors. The status and message are the core's; GoTrue's body carries no other header.
struct GoTrueErrors: ErrorRenderer {
    var format: ErrorFormat { .gotrue }

    func response(to error: BusError, status: HTTPResponse.Status, headers: HTTPFields, requestID: String) -> Response {
        GoTrueError(error).response(versioned: false)
    }

    func response(to refusal: RateLimited, requestID: String) -> Response {
        GoTrueError(refusal).response(versioned: false)
    }

    /// No `/auth/v1` route is gated by the terms; if one ever is, its refusal in GoTrue's body.
    func response(to refusal: TermsNotAccepted, requestID: String) -> Response {
        GoTrueError(.forbidden, TermsNotAccepted.code, refusal.message).response(versioned: false)
    }

    var openAPISchema: JSONValue { .object(["$ref": .string("#/components/schemas/GoTrueError")]) }

    var openAPIComponents: [String: JSONValue] {
        [
            "GoTrueError": .object([
                "type": .string("object"),
                "description": .string(
                    "Supabase Auth's error: {code: <status>, error_code, msg}, or {code: <error code>, message} with X-Supabase-Api-Version 2024-01-01 or later."
                ),
                "properties": .object([
                    "code": .object([:]), "error_code": .object(["type": .string("string")]),
                    "msg": .object(["type": .string("string")]), "message": .object(["type": .string("string")]),
                ]),
            ])
        ]
    }
}
