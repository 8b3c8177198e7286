import Bus
import Contracts
import Foundation
import GatewayService
import Hummingbird

/// An error in PostgREST's shape (`{"code","details","hint","message"}`) with PostgREST's status,
/// so Supabase clients report it exactly as they would one from a real PostgREST.
struct PostgRESTError: Error, Sendable {
    let status: HTTPResponse.Status
    let code: String
    let message: String
    let details: String?
    var hint: String? = nil

    init(status: HTTPResponse.Status, code: String, message: String, details: String? = nil, hint: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.hint = hint
    }

    func response() -> Response {
        let body = JSONBodies.object([
            "code": .string(code), "message": .string(message),
            "details": details.map { .string($0) } ?? .null, "hint": hint.map { .string($0) } ?? .null,
        ])
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// PGRST100: the query string could not be parsed or uses what is not supported.
    static func badQuery(_ message: String, details: String? = nil, hint: String? = nil) -> PostgRESTError {
        PostgRESTError(RestQueryError.badQuery(message, details: details, hint: hint))
    }

    /// A query's refusal (parse or table-schema check) as this error: same code, status and texts.
    init(_ error: RestQueryError) {
        self.init(status: .init(code: error.status), code: error.code, message: error.message, details: error.details, hint: error.hint)
    }

    /// Runs a query's parse or table-schema check, its refusal as this error.
    static func converting<T>(_ body: () throws(RestQueryError) -> T) throws(PostgRESTError) -> T {
        do { return try body() } catch { throw PostgRESTError(error) }
    }

    /// PGRST103 (416): an offset past the rows that match.
    static func rangeNotSatisfiable(offset: Int, total: Int) -> PostgRESTError {
        PostgRESTError(
            status: .rangeNotSatisfiable, code: "PGRST103", message: "Requested range not satisfiable",
            details: "An offset of \(offset) was requested, but there are only \(total) rows.")
    }

    /// The PostgREST code closest to a bus error code: JWT problems are PGRST301, row-level
    /// security refusals 42501, unknown tables PGRST205, bad bodies PGRST102; the rest keep the
    /// bus code after `PGRST-` so nothing is lost.
    static func code(for code: ErrorCode) -> String {
        switch code {
        case .unauthenticated: "PGRST301"
        case .forbidden, .restrictedState: "42501"
        case .notFound: "PGRST205"
        case .invalidArgument: "PGRST102"
        case .conflict: "23505"
        default: "PGRST-" + code.rawValue
        }
    }

    /// PGRST116: `.single()` (`Accept: application/vnd.pgrst.object+json`) with 0 or several rows.
    static func notOneRow(_ count: Int) -> PostgRESTError {
        PostgRESTError(
            status: .notAcceptable, code: "PGRST116", message: "JSON object requested, multiple (or no) rows returned",
            details: "The result contains \(count) rows")
    }
}

/// Answered as it is wherever it is thrown (only `/rest/v1` routes throw it).
extension PostgRESTError: RenderedError {
    func response(requestID: String) -> Response { response() }
}

extension ErrorFormat {
    /// PostgREST's `{"code","details","hint","message"}` under `/rest/v1`.
    static let postgrest = ErrorFormat(name: "postgrest")
}

/// The `/rest/v1` family's errors in PostgREST's body, so Supabase clients report them as they
/// would a PostgREST error: the bus code mapped to PostgREST's (``PostgRESTError/code(for:)``),
/// the details as `key=value` text.
struct PostgRESTErrors: ErrorRenderer {
    var format: ErrorFormat { .postgrest }

    func response(to error: BusError, status: HTTPResponse.Status, headers: HTTPFields, requestID: String) -> Response {
        var response = PostgRESTError(
            status: status, code: PostgRESTError.code(for: error.code), message: error.message,
            details: error.details.map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ") }
        )
        .response()
        if let retryAfter = headers[RateLimited.retryAfterHeader] { response.headers[RateLimited.retryAfterHeader] = retryAfter }
        return response
    }

    func response(to refusal: RateLimited, requestID: String) -> Response {
        PostgRESTError(status: .tooManyRequests, code: "PGRST-rate_limited", message: refusal.message, details: "rule=\(refusal.rule)")
            .response()
    }

    func response(to refusal: TermsNotAccepted, requestID: String) -> Response {
        PostgRESTError(
            status: .forbidden, code: "PGRST-" + TermsNotAccepted.code, message: refusal.message,
            details: "currentVersion=\(refusal.currentVersion)", hint: "accept the terms in effect, then retry"
        ).response()
    }

    var openAPISchema: JSONValue { .object(["$ref": .string("#/components/schemas/PostgRESTError")]) }

    var openAPIComponents: [String: JSONValue] {
        [
            "PostgRESTError": .object([
                "type": .string("object"), "required": .array([.string("code"), .string("message")]),
                "properties": .object([
                    "code": .object(["type": .string("string")]), "message": .object(["type": .string("string")]),
                    "details": .object(["type": .string("string"), "nullable": .bool(true)]),
                    "hint": .object(["type": .string("string"), "nullable": .bool(true)]),
                ]),
            ])
        ]
    }
}
