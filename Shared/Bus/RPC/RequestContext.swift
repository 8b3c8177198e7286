import Foundation
import Logging

/// What a handler knows about the request it serves besides its payload.
public struct RequestContext: Sendable {
    /// The request's header (payload included, as raw JSON).
    public let envelope: Envelope
    /// The peer's name from the CURVE admission list (the ZAP `User-Id`); `nil` over plaintext.
    public let peer: String?
    /// Who the request acts for, honoured only from peers allowed to assert it; otherwise the
    /// peer itself (`service:<peer>`) or anonymous.
    public let principal: Principal
    /// Binary frames that came after the envelope (document chunks).
    public let attachments: [Data]
    /// A logger carrying the request id, type and trace.
    public let logger: Logger

    public var deadline: Date? { envelope.deadline }
    public var idempotencyKey: String? { envelope.idempotencyKey }
}
