import Foundation

/// The one message shape on the bus (DESIGN.md §2): requests, replies and events alike.
/// On the wire it is a JSON object; unknown members are ignored so peers can add fields.
public struct Envelope: Sendable, Equatable {
    /// The protocol major version this build speaks. A request with a newer one gets an error reply.
    public static let protocolVersion = 1

    public enum Kind: String, Sendable, Codable {
        case request, reply, event
    }

    public var v: Int
    public var id: UUID
    public var kind: Kind
    /// The message type, e.g. `audit.record`; for events also the topic.
    public var type: String
    /// On a reply: the `id` of the request it answers.
    public var correlationId: UUID?
    public var sentAt: Date
    /// After this instant the sender no longer waits; servers drop such requests.
    public var deadline: Date?
    /// W3C trace context, passed along so one request can be followed across services.
    public var traceparent: String?
    public var principal: Principal?
    public var idempotencyKey: String?
    /// On events published from an outbox: the publisher's gap-free sequence number.
    public var sequence: Int64?
    /// The JSON of the `Contracts` type, kept as bytes: decoded once, by whoever knows its type.
    public var payload: Data?
    public var error: BusError?

    public init(
        v: Int = Envelope.protocolVersion, id: UUID = MessageID.make(), kind: Kind, type: String,
        correlationId: UUID? = nil, sentAt: Date = Date(), deadline: Date? = nil,
        traceparent: String? = nil, principal: Principal? = nil, idempotencyKey: String? = nil,
        sequence: Int64? = nil, payload: Data? = nil, error: BusError? = nil
    ) {
        self.v = v
        self.id = id
        self.kind = kind
        self.type = type
        self.correlationId = correlationId
        self.sentAt = sentAt
        self.deadline = deadline
        self.traceparent = traceparent
        self.principal = principal
        self.idempotencyKey = idempotencyKey
        self.sequence = sequence
        self.payload = payload
        self.error = error
    }

    /// The reply to this request: same type and trace, correlated by id.
    public func reply(payload: Data?, error: BusError? = nil) -> Envelope {
        Envelope(
            kind: .reply, type: type, correlationId: id, traceparent: traceparent,
            idempotencyKey: idempotencyKey, payload: payload, error: error)
    }

    /// Decodes the payload as `T`; a payload of the wrong shape is the sender's error.
    public func decodePayload<T: Decodable>(_ type: T.Type) throws(BusError) -> T {
        do {
            return try BusJSON.decode(T.self, from: payload ?? Data("null".utf8))
        } catch {
            throw BusError(.invalidArgument, "payload of \(self.type) is not a valid \(T.self): \(BusJSON.describe(error))")
        }
    }
}
