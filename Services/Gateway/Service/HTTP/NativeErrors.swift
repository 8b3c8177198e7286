import Bus
import Contracts
import HTTPTypes
import Hummingbird

/// The native API's error body: `{"error": "<code>", "message", "details": {…}, "requestId"}`.
/// `rate_limited` and `terms_not_accepted` are the two codes outside the bus's closed set: the bus
/// never carries them, they are the gateway's own refusals.
package struct NativeErrors: ErrorRenderer {
    package var format: ErrorFormat { .native }

    package func response(to error: BusError, status: HTTPResponse.Status, headers: HTTPFields, requestID: String) -> Response {
        var members: [String: JSONValue] = [
            "error": .string(error.code.rawValue), "message": .string(error.message), "requestId": .string(requestID),
        ]
        if let details = error.details { members["details"] = .object(details.mapValues { .string($0) }) }
        return Self.json(status, members, headers: headers)
    }

    package func response(to refusal: RateLimited, requestID: String) -> Response {
        Self.json(
            .tooManyRequests,
            [
                "error": .string("rate_limited"), "message": .string(refusal.message), "requestId": .string(requestID),
                "details": .object(["rule": .string(refusal.rule), "retryAfter": .string(String(refusal.retryAfterSeconds))]),
            ])
    }

    package func response(to refusal: TermsNotAccepted, requestID: String) -> Response {
        Self.json(
            .forbidden,
            [
                "error": .string(TermsNotAccepted.code), "message": .string(refusal.message), "requestId": .string(requestID),
                "currentVersion": .string(refusal.currentVersion),
                "details": .object(["documentType": .string("terms_of_service"), "currentVersion": .string(refusal.currentVersion)]),
            ])
    }

    package var openAPISchema: JSONValue { .object(["$ref": .string("#/components/schemas/Error")]) }

    package var openAPIComponents: [String: JSONValue] {
        [
            "Error": .object([
                "type": .string("object"), "required": .array([.string("error")]),
                "properties": .object([
                    "error": .object(["type": .string("string")]), "message": .object(["type": .string("string")]),
                    "requestId": .object(["type": .string("string")]),
                    "details": .object(["type": .string("object"), "additionalProperties": .object(["type": .string("string")])]),
                ]),
            ])
        ]
    }
}

/// The onboarding routes' body, the one seed 004's client reads: `{"error": "<message>"}`.
package struct OnboardingErrors: ErrorRenderer {
    package var format: ErrorFormat { .onboarding }

    package func response(to error: BusError, status: HTTPResponse.Status, headers: HTTPFields, requestID: String) -> Response {
        Self.json(status, ["error": .string(error.message)], headers: headers)
    }

    package func response(to refusal: RateLimited, requestID: String) -> Response {
        Self.json(.tooManyRequests, ["error": .string(refusal.message)])
    }

    package func response(to refusal: TermsNotAccepted, requestID: String) -> Response {
        Self.json(.forbidden, ["error": .string(refusal.message)])
    }

    package var openAPISchema: JSONValue {
        .object([
            "type": .string("object"), "required": .array([.string("error")]),
            "properties": .object(["error": .object(["type": .string("string")])]),
        ])
    }

    package var openAPIComponents: [String: JSONValue] { [:] }
}
