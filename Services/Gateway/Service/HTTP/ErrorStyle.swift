import Bus
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// The error bodies the gateway answers with, one per route family. Each family's router group
/// declares its style (``RouteFamily``, ``ErrorStyleMiddleware``); only a request that no route
/// matched, and so reached no family, is styled by its path (``init(unmatchedPath:)``).
///
/// - `onboarding`: the app's onboarding routes (seed 004's client), `{"error": "<message>"}` (its client shows the message as is).
/// - `postgrest`: PostgREST's `{"code","details","hint","message"}` under `/rest/v1`, so Supabase
///   clients report it as they would a PostgREST error.
/// - `storage`: Supabase Storage's `{"statusCode": "404", "error": "not_found", "message": "…"}` under `/storage/v1`.
/// - `native`: everything else, `{"error": "<code>", "message": "…", "details": {…}, "requestId": "…"}`,
///   `error` being one of the bus's closed set of codes (`invalid_argument`, `not_found`, …).
/// - `gotrue`: Supabase Auth's `{"code", "error_code", "msg"}` under `/auth/v1` (``GoTrueError``).
enum ErrorStyle: Sendable {
    case onboarding, postgrest, storage, gotrue, native

    /// The style of a request no route matched (an unknown path, or a method a path does not
    /// take): that of the family whose paths it falls under, so a Supabase client's typo still
    /// gets the error body its SDK reads.
    init(unmatchedPath path: String) {
        if path.hasPrefix(GoTrueRoutes.prefix + "/") {
            self = .gotrue
        } else if path.hasPrefix(PostgRESTRoutes.prefix + "/") || path == PostgRESTRoutes.prefix {
            self = .postgrest
        } else if path.hasPrefix(StorageRoutes.prefix + "/") {
            self = .storage
        } else if path == LegalRoutes.seedTermsPath || path == OnboardingRoutes.prefix || path.hasPrefix(OnboardingRoutes.prefix + "/") {
            self = .onboarding
        } else {
            self = .native
        }
    }
}

/// Turns anything a route throws into a JSON error response.
enum ErrorResponses {
    static func response(for error: any Error, style: ErrorStyle, requestID: String, logger: Logger) -> Response {
        var response = body(for: error, style: style, requestID: requestID, logger: logger)
        // A backend that is down or a database that refuses for now: tell clients when to try
        // again (the bus reconnects within a second), unless the error said so itself.
        if response.status == .serviceUnavailable, response.headers[.retryAfter] == nil {
            response.headers[.retryAfter] = String(retryAfterSeconds)
        }
        return response
    }

    /// Seconds a 503 asks the client to wait.
    static let retryAfterSeconds = 1

    private static func body(for error: any Error, style: ErrorStyle, requestID: String, logger: Logger) -> Response {
        if let rest = error as? PostgRESTError { return rest.response() }
        if let tus = error as? TusVersionMismatch { return tus.response(requestID: requestID) }
        if let limited = error as? RateLimited { return limited.response(style: style, requestID: requestID) }
        if style == .gotrue { return GoTrueError.from(error, logger: logger).response(versioned: false) }
        if let terms = error as? TermsNotAccepted { return terms.response(style: style, requestID: requestID) }
        let busError = busError(from: error, logger: logger)
        let status = HTTPResponse.Status(code: busError.code.httpStatus)
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if busError.code == .unauthenticated { headers[.wwwAuthenticate] = "Bearer" }
        if busError.code == .unavailable { headers[RateLimited.retryAfterHeader] = retryAfterSeconds(busError) }
        let body: Data
        switch style {
        case .onboarding:
            body = JSONBodies.object(["error": .string(busError.message)])
        case .postgrest:
            var response = PostgRESTError(
                status: status, code: PostgRESTError.code(for: busError.code), message: busError.message,
                details: busError.details.map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ") }
            )
            .response()
            if let retryAfter = headers[RateLimited.retryAfterHeader] { response.headers[RateLimited.retryAfterHeader] = retryAfter }
            return response
        case .storage:
            // Supabase Storage's shape: `statusCode` is a string there.
            body = JSONBodies.object([
                "statusCode": .string(String(busError.code.httpStatus)), "error": .string(StorageRoutes.errorName(busError.code)),
                "message": .string(busError.message),
            ])
        case .gotrue, .native:
            var members: [String: JSONValue] = [
                "error": .string(busError.code.rawValue), "message": .string(busError.message), "requestId": .string(requestID),
            ]
            if let details = busError.details { members["details"] = .object(details.mapValues { .string($0) }) }
            body = JSONBodies.object(members)
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// How long a client should wait before retrying an `unavailable` answer (RFC 9110 §10.2.3):
    /// the service's hint when it gave one (a lock or statement timeout), else one second.
    static func retryAfterSeconds(_ error: BusError) -> String {
        guard let hint = error.details?["retryAfterSeconds"], let seconds = Int(hint), (1...3600).contains(seconds) else { return "1" }
        return String(seconds)
    }

    /// The bus error a thrown error stands for. Errors of unknown kind become `internal`, with
    /// their text in the log only.
    static func busError(from error: any Error, logger: Logger) -> BusError {
        switch error {
        case let error as BusError:
            if error.code == .internal { logger.error("internal error from a service", metadata: ["error": "\(error.message)"]) }
            return error
        case let error as HTTPError:
            let code: ErrorCode =
                switch error.status.code {
                case 400: .invalidArgument
                case 401: .unauthenticated
                case 403: .forbidden
                case 404, 405: .notFound
                case 409: .conflict
                case 410: .gone
                case 413: .payloadTooLarge
                case 415: .unsupportedMediaType
                case 503: .unavailable
                case 504: .deadlineExceeded
                default: .internal
                }
            let message = error.body ?? (code == .notFound ? "no such route" : error.status.reasonPhrase)
            return BusError(code, message)
        case is CancellationError:
            return BusError(.unavailable, "the request was cancelled")
        default:
            logger.error("unexpected error", metadata: ["error": "\(error)"])
            return BusError(.internal, "internal error")
        }
    }
}
