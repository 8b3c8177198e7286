import Foundation
import HTTPTypes
import Hummingbird

extension RateLimited {
    static let retryAfterHeader = HTTPField.Name("Retry-After")!

    /// The message every family's body carries.
    var message: String { "too many requests: try again in \(retryAfterSeconds) s" }

    /// 429 with `Retry-After` (whole seconds) and the error body of the route's family: seed
    /// `{"error": message}`, PostgREST `{"code": "PGRST-rate_limited", …}`, Storage's shape, or the
    /// native `{"error": "rate_limited", "message", "details": {"rule", "retryAfter"}, "requestId"}`.
    /// `rate_limited` is the one native code outside the bus's closed set: the bus never carries
    /// it, it is the gateway's own refusal.
    func response(style: ErrorStyle, requestID: String) -> Response {
        var response: Response
        switch style {
        case .postgrest:
            response = PostgRESTError(status: .tooManyRequests, code: "PGRST-rate_limited", message: message, details: "rule=\(rule)").response()
        case .onboarding:
            response = Self.json(JSONBodies.object(["error": .string(message)]))
        case .storage:
            response = Self.json(JSONBodies.object(["statusCode": .string("429"), "error": .string("rate_limited"), "message": .string(message)]))
        case .gotrue:
            var refusal = GoTrueError(.tooManyRequests, "over_request_rate_limit", message)
            refusal.retryAfterSeconds = retryAfterSeconds
            return refusal.response(versioned: false)
        case .native:
            response = Self.json(
                JSONBodies.object([
                    "error": .string("rate_limited"), "message": .string(message), "requestId": .string(requestID),
                    "details": .object(["rule": .string(rule), "retryAfter": .string(String(retryAfterSeconds))]),
                ]))
        }
        response.headers[Self.retryAfterHeader] = String(retryAfterSeconds)
        return response
    }

    private static func json(_ body: Data) -> Response {
        Response(
            status: .tooManyRequests, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
