import Foundation
import Hummingbird
import Logging

/// What the gateway knows of one request while it runs: Hummingbird's core storage, the peer
/// address of the connection, and what ``RequestTracingMiddleware`` adds (request id, the W3C
/// trace context sent on every bus call, the client's address as trusted proxies report it), the
/// caller's ``Authentication`` in an authenticated group, and the signed-in caller of a route in a
/// signed-in group (``SignedInMiddleware``).
public struct GatewayContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The TCP peer: the client, or the last proxy.
    public let peerAddress: String?
    public var requestID = ""
    /// `00-<trace id>-<this request's span id>-<flags>`, put into every envelope.
    public var traceparent = ""
    /// The client's address (see ``TrustedProxies``), forwarded to Accounts and Audit.
    public var clientIP: String?
    /// What `Authorization` says, set by ``AuthenticationMiddleware`` for the routes of an
    /// authenticated group (read through ``authentication()``).
    var resolvedAuthentication: Authentication?
    /// Who the request signed in as, set by ``SignedInMiddleware`` for the routes of a signed-in group.
    var signedInCaller: SignedInCaller?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = source.channel.remoteAddress?.ipAddress
    }
}

extension GatewayContext {
    /// A path parameter, percent-decoded (the router hands them over as they were sent).
    package func pathParameter(_ name: String) -> String? {
        guard let raw = parameters.get(name) else { return nil }
        // Most parameters (ids) have nothing to decode; Foundation's decoder bridges through
        // NSString even then (2% of the gateway's CPU per acceptance).
        guard raw.utf8.contains(UInt8(ascii: "%")) else { return raw }
        return raw.removingPercentEncoding ?? raw
    }
}
