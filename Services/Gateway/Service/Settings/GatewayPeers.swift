import Bus
import ServiceKit

/// Where the gateway reaches each service, with the same variables the services use for their
/// peers (`LEGAL_RPC_ENDPOINTS`, `LEGAL_PUBLIC_KEY`, …, `BUS_SECRET_KEY`). The gateway binds no bus
/// socket, so it reads only the client side of ``BusSettings`` (and its `BUS_EVENT_LOOP`), and where the services' event
/// sockets are (`<SERVICE>_EVENTS_ENDPOINTS`): its copy of the legal texts follows Legal's events,
/// its session check Accounts' revocations.
public struct GatewayPeers: Sendable {
    public var keys: CurveKeyPair?
    public var endpoints: [ServiceName: [String]]
    /// Where each service's events (PUB) are.
    public var eventEndpoints: [ServiceName: [String]]
    public var publicKeys: [ServiceName: String]
    /// Which threads poll the gateway's bus sockets (`BUS_EVENT_LOOP`, read by ``BusSettings``).
    public var eventLoop: BusEventLoopMode

    public init(environment env: EnvironmentReader) throws {
        let secret = env.secret(
            "BUS_SECRET_KEY", default: "", "The gateway's CURVE secret key (Z85, 40 characters). Empty: plaintext bus, local development only.")
        if secret.revealed.isEmpty {
            keys = nil
        } else {
            do { keys = try CurveKeyPair(secretKey: secret.revealed) } catch {
                throw ConfigurationError(variable: "BUS_SECRET_KEY", value: nil, expected: "a 40-character Z85 CURVE secret key")
            }
        }
        var endpoints: [ServiceName: [String]] = [:]
        var eventEndpoints: [ServiceName: [String]] = [:]
        var publicKeys: [ServiceName: String] = [:]
        for peer in ServiceName.allCases {
            let prefix = peer.variablePrefix
            endpoints[peer] = env.list(
                "\(prefix)_RPC_ENDPOINTS", default: [peer.defaultRPCEndpoint],
                "Where to reach the \(peer.rawValue) service's RPC socket (several: requests spread over them).")
            eventEndpoints[peer] = env.list(
                "\(prefix)_EVENTS_ENDPOINTS", default: [peer.defaultEventsEndpoint], "Where to subscribe to the \(peer.rawValue) service's events.")
            let key = env.string("\(prefix)_PUBLIC_KEY", default: "", "The \(peer.rawValue) service's CURVE public key (when the bus is CURVE).")
            if !key.isEmpty { publicKeys[peer] = key }
        }
        self.endpoints = endpoints
        self.eventEndpoints = eventEndpoints
        self.publicKeys = publicKeys
        eventLoop = try BusSettings.eventLoop(env)
    }

    /// Client security towards `peer`; CURVE needs the peer's public key.
    public func security(for peer: ServiceName) throws -> ClientSecurity {
        guard let keys else { return .plaintext }
        guard let serverKey = publicKeys[peer] else {
            throw ConfigurationError.missing(
                "\(peer.variablePrefix)_PUBLIC_KEY", expected: "the \(peer.rawValue) service's CURVE public key, since BUS_SECRET_KEY is set")
        }
        return .curve(keys, serverPublicKey: serverKey)
    }
}
