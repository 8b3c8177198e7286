import Bus
import Contracts
import Foundation
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
        PostgRESTError(status: .badRequest, code: "PGRST100", message: message, details: details, hint: hint)
    }

    /// Runs a table-schema check, its refusal as this error (same code, status and texts).
    static func converting<T>(_ body: () throws(RestQueryError) -> T) throws(PostgRESTError) -> T {
        do { return try body() } catch {
            throw PostgRESTError(
                status: .init(code: error.status), code: error.code, message: error.message, details: error.details, hint: error.hint)
        }
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
