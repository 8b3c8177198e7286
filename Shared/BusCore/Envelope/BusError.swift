/// The closed set of error codes on the bus, each with the HTTP status the gateway answers with.
public enum ErrorCode: String, Sendable, Codable, CaseIterable {
    case invalidArgument = "invalid_argument"
    case unauthenticated
    case forbidden
    case restrictedState = "restricted_state"
    case notFound = "not_found"
    case gone
    case conflict
    case payloadTooLarge = "payload_too_large"
    case unsupportedMediaType = "unsupported_media_type"
    /// An idempotency key reused, within the window it is remembered, for a request with another
    /// body: the caller must choose a new key for a new action.
    case idempotencyKeyReused = "idempotency_key_reused"
    case unavailable
    case deadlineExceeded = "deadline_exceeded"
    case `internal`

    public var httpStatus: Int {
        switch self {
        case .invalidArgument: 400
        case .unauthenticated: 401
        case .forbidden, .restrictedState: 403
        case .notFound: 404
        case .conflict: 409
        case .gone: 410
        case .payloadTooLarge: 413
        case .unsupportedMediaType: 415
        case .idempotencyKeyReused: 422
        case .internal: 500
        case .unavailable: 503
        case .deadlineExceeded: 504
        }
    }

    /// Decoding is lenient: a code this build does not know (a newer peer) reads as `internal`
    /// rather than failing the whole reply.
    public init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(String.self)
        self = ErrorCode(rawValue: raw) ?? .internal
    }
}

/// An error as it travels in an envelope's `error` member, and as handlers throw it.
public struct BusError: Error, Sendable, Codable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    public var details: [String: String]?

    public init(_ code: ErrorCode, _ message: String, details: [String: String]? = nil) {
        self.code = code
        self.message = message
        self.details = details
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// `unavailable`: no connection to `service` is up (it is down, or not started yet). One
    /// wording wherever a client finds no peer, so a caller sees the same 503 from every path.
    public static func unreachable(_ service: String) -> BusError {
        BusError(.unavailable, "the \(service) service is unreachable")
    }
}
