import Foundation
import Logging

/// What a handler knows about the request it serves besides its payload.
public struct BusRequestContext: Sendable {
    /// The request's header (payload included, as raw JSON).
    public let envelope: Envelope
    /// The peer's name from the CURVE admission list (the ZAP `User-Id`); `nil` over plaintext.
    public let peer: String?
    /// Who the request acts for, honoured only from peers allowed to assert it; otherwise the
    /// peer itself (`service:<peer>`) or anonymous.
    public let principal: Principal
    /// Binary frames that came after the envelope (document chunks).
    public let attachments: [Data]
    /// Services that may act for any user (``RPCServerOptions/servicesActingForUsers``); read by
    /// the authorization rule (`BusRequestContext+Authorization.swift`).
    let servicesActingForUsers: Set<String>?
    private let serverLogger: Logger

    init(
        envelope: Envelope, peer: String?, principal: Principal, attachments: [Data],
        servicesActingForUsers: Set<String>? = nil, logger: Logger
    ) {
        self.envelope = envelope
        self.peer = peer
        self.principal = principal
        self.attachments = attachments
        self.servicesActingForUsers = servicesActingForUsers
        self.serverLogger = logger
    }

    /// A logger carrying the request id, type and trace. Built when asked for: most requests log
    /// nothing, and setting three metadata values per request was about 3% of a round trip's CPU.
    /// A handler that logs several times may keep a copy.
    public var logger: Logger {
        var logger = serverLogger
        logger[metadataKey: "request"] = .stringConvertible(envelope.id)
        logger[metadataKey: "type"] = .string(envelope.type)
        if let trace = envelope.traceparent { logger[metadataKey: "traceparent"] = .string(trace) }
        return logger
    }

    public var deadline: Date? { envelope.deadline }
    public var idempotencyKey: String? { envelope.idempotencyKey }
}
