import Bus
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// The error format of a request no route matched (an unknown path, or a method a path does not
/// take): that of the family whose paths it falls under, so a Supabase client's typo still gets
/// the error body its SDK reads. Each family with a path space of its own is listed by the
/// application that wires the route modules; anything else is native.
package struct UnmatchedPathErrors: Sendable {
    package struct Space: Sendable {
        let path: String
        let matchesPath: Bool
        let matchesBelow: Bool
        let renderer: any ErrorRenderer

        /// The paths under `prefix + "/"`, and `prefix` itself when `includingPrefix`.
        package init(_ prefix: String, includingPrefix: Bool = false, _ renderer: any ErrorRenderer) {
            (path, matchesPath, matchesBelow, self.renderer) = (prefix, includingPrefix, true, renderer)
        }

        /// `path` alone.
        package init(exactly path: String, _ renderer: any ErrorRenderer) {
            (self.path, matchesPath, matchesBelow, self.renderer) = (path, true, false, renderer)
        }

        func contains(_ candidate: String) -> Bool {
            (matchesPath && candidate == path) || (matchesBelow && candidate.hasPrefix(path + "/"))
        }
    }

    let spaces: [Space]
    let fallback: any ErrorRenderer

    init(_ spaces: [Space], fallback: any ErrorRenderer = NativeErrors()) {
        self.spaces = spaces
        self.fallback = fallback
    }

    func renderer(forUnmatched path: String) -> any ErrorRenderer {
        spaces.first { $0.contains(path) }?.renderer ?? fallback
    }
}

/// Turns anything a route throws into a JSON error response.
package enum ErrorResponses {
    static func response(for error: any Error, renderer: any ErrorRenderer, requestID: String, logger: Logger) -> Response {
        var response = body(for: error, renderer: renderer, requestID: requestID, logger: logger)
        // A backend that is down or a database that refuses for now: tell clients when to try
        // again (the bus reconnects within a second), unless the error said so itself.
        if response.status == .serviceUnavailable, response.headers[.retryAfter] == nil {
            response.headers[.retryAfter] = String(retryAfterSeconds)
        }
        return response
    }

    /// Seconds a 503 asks the client to wait.
    static let retryAfterSeconds = 1

    private static func body(for error: any Error, renderer: any ErrorRenderer, requestID: String, logger: Logger) -> Response {
        if let rendered = error as? any RenderedError { return rendered.response(requestID: requestID) }
        if let limited = error as? RateLimited {
            var response = renderer.response(to: limited, requestID: requestID)
            response.headers[RateLimited.retryAfterHeader] = String(limited.retryAfterSeconds)
            return response
        }
        if let terms = error as? TermsNotAccepted {
            var response = renderer.response(to: terms, requestID: requestID)
            response.headers[TermsNotAccepted.versionHeader] = terms.currentVersion
            return response
        }
        let busError = busError(from: error, logger: logger)
        let status = HTTPResponse.Status(code: busError.code.httpStatus)
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if busError.code == .unauthenticated { headers[.wwwAuthenticate] = "Bearer" }
        if busError.code == .unavailable { headers[RateLimited.retryAfterHeader] = retryAfterSeconds(busError) }
        return renderer.response(to: busError, status: status, headers: headers, requestID: requestID)
    }

    /// How long a client should wait before retrying an `unavailable` answer (RFC 9110 §10.2.3):
    /// the service's hint when it gave one (a lock or statement timeout), else one second.
    static func retryAfterSeconds(_ error: BusError) -> String {
        guard let hint = error.details?["retryAfterSeconds"], let seconds = Int(hint), (1...3600).contains(seconds) else { return "1" }
        return String(seconds)
    }

    /// The bus error a thrown error stands for. Errors of unknown kind become `internal`, with
    /// their text in the log only.
    package static func busError(from error: any Error, logger: Logger) -> BusError {
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
