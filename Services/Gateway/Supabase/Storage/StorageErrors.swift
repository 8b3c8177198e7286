import Bus
import Contracts
import GatewayService
import HTTPTypes
import Hummingbird

extension ErrorFormat {
    /// Supabase Storage's `{"statusCode": "404", "error": "not_found", "message": "…"}` under `/storage/v1`.
    static let storage = ErrorFormat(name: "storage")
}

/// The `/storage/v1` family's errors in Supabase Storage's body (`statusCode` is a string there),
/// with the headers the core set.
struct StorageErrors: ErrorRenderer {
    var format: ErrorFormat { .storage }

    func response(to error: BusError, status: HTTPResponse.Status, headers: HTTPFields, requestID: String) -> Response {
        Self.json(
            status,
            [
                "statusCode": .string(String(error.code.httpStatus)), "error": .string(Self.errorName(error.code)),
                "message": .string(error.message),
            ], headers: headers)
    }

    func response(to refusal: RateLimited, requestID: String) -> Response {
        Self.json(.tooManyRequests, ["statusCode": .string("429"), "error": .string("rate_limited"), "message": .string(refusal.message)])
    }

    func response(to refusal: TermsNotAccepted, requestID: String) -> Response {
        Self.json(.forbidden, ["statusCode": .string("403"), "error": .string(TermsNotAccepted.code), "message": .string(refusal.message)])
    }

    /// Storage's error names for the bus codes.
    static func errorName(_ code: ErrorCode) -> String {
        switch code {
        case .notFound: "not_found"
        case .unauthenticated: "Unauthorized"
        case .invalidArgument: "InvalidRequest"
        case .gone: "ExpiredToken"
        default: code.rawValue
        }
    }

    var openAPISchema: JSONValue { .object(["$ref": .string("#/components/schemas/StorageError")]) }

    var openAPIComponents: [String: JSONValue] {
        [
            "StorageError": .object([
                "type": .string("object"), "required": .array([.string("statusCode"), .string("error"), .string("message")]),
                "properties": .object([
                    "statusCode": .object(["type": .string("string")]), "error": .object(["type": .string("string")]),
                    "message": .object(["type": .string("string")]),
                ]),
            ])
        ]
    }
}
