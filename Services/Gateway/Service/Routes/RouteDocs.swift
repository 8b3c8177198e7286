import Bus

/// What `/openapi.json` says of a route beyond its method, path, summary and error body: declared
/// where the route is registered (``RouteFamily/add(_:_:_:public:docs:_:)``), so every route,
/// a route module's among them, documents itself and the document builder knows no path.
package struct RouteDocs: Sendable {
    /// A query or header parameter: its name and JSON schema.
    package typealias Parameter = (name: String, schema: JSONValue)

    /// What the request carries.
    package enum Body: Sendable, Equatable {
        /// Nothing: the default of GET, HEAD, DELETE and OPTIONS.
        case none
        /// A JSON object: the default of POST, PUT and PATCH (required).
        case json(required: Bool)
        /// tus' bytes (`application/offset+octet-stream`).
        case uploadBytes(required: Bool)
    }

    /// What a success answers.
    package enum Answer: Sendable, Equatable {
        /// JSON with this status: the default (200) of every method but DELETE.
        case json(status: Int)
        /// No body, 204: the default of DELETE.
        case noContent
        /// An HTML page, with the short page of a 503 when it cannot be shown and 304 to a
        /// current `If-None-Match`.
        case page
        /// Plain text (the Prometheus exposition).
        case text
        /// A document's bytes: 200 or 206 for a range, 304, 416.
        case bytes
        /// The personal-data export's ZIP archive, streamed.
        case zip
        /// tus: headers only, with this status, and 412 for another protocol version.
        case tus(status: Int)
    }

    package var query: [Parameter]
    package var headers: [Parameter]
    /// nil: by method (see ``Body``).
    package var body: Body?
    /// nil: by method (see ``Answer``).
    package var answer: Answer?
    /// Whether a rate limit guards the route: its 429 and `Retry-After` are documented.
    package var rateLimited: Bool
    /// Whether it answers 304 to a current `If-None-Match` (JSON reads with an `ETag`).
    package var conditional: Bool

    package init(
        query: [Parameter] = [], headers: [Parameter] = [], body: Body? = nil, answer: Answer? = nil, rateLimited: Bool = false,
        conditional: Bool = false
    ) {
        self.query = query
        self.headers = headers
        self.body = body
        self.answer = answer
        self.rateLimited = rateLimited
        self.conditional = conditional
    }

    /// The request body of `method` when ``body`` leaves it to the method.
    func body(of method: String) -> Body {
        body ?? (["POST", "PUT", "PATCH"].contains(method) ? .json(required: true) : .none)
    }

    /// The success of `method` when ``answer`` leaves it to the method.
    func answer(of method: String) -> Answer {
        answer ?? (method == "DELETE" ? .noContent : .json(status: 200))
    }
}

extension RouteDocs {
    /// A free-form text parameter.
    package static let text: JSONValue = .object(["type": .string("string")])
    /// A parameter of `values` only.
    package static func oneOf(_ values: [String]) -> JSONValue {
        .object(["type": .string("string"), "enum": .array(values.map { .string($0) })])
    }
    /// A whole number from `minimum` (to `maximum`, when given).
    package static func integer(minimum: Int, maximum: Int? = nil) -> JSONValue {
        var schema: [String: JSONValue] = ["type": .string("integer"), "minimum": .int(Int64(minimum))]
        if let maximum { schema["maximum"] = .int(Int64(maximum)) }
        return .object(schema)
    }
    /// `Range` and `If-None-Match`: the headers of a byte download.
    package static let rangeHeaders: [Parameter] = [("Range", text), ("If-None-Match", text)]
}
