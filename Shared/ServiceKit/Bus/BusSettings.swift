import Bus

/// How a service joins the bus: where it binds, where its peers are, and its CURVE keys.
///
/// Security is off (plaintext, any local peer) when `BUS_SECRET_KEY` is empty: the local default.
/// Compose and Kubernetes set keys for every process; then every socket is CURVE, servers admit
/// only the listed public keys, and clients pin each server's public key.
public struct BusSettings: Sendable {
    /// Where this service binds its ROUTER and PUB sockets.
    public var rpcBind: [String]
    public var eventsBind: [String]
    /// This process's CURVE key pair; `nil` means plaintext.
    public var keys: CurveKeyPair?
    /// Client public keys admitted by this service's sockets, by peer name.
    public var admitted: [String: String]
    /// Peers whose `principal` this service honours (over CURVE).
    public var principalAsserters: Set<String>
    /// Services whose own `service:` principal may act for any user (over CURVE).
    public var servicesActingForUsers: Set<String>
    /// Per peer service: RPC and event endpoints to connect to, and its public key.
    public var peers: [ServiceName: Peer]
    /// What this service's RPC server keeps of write replies to answer retries.
    public var idempotency: IdempotencyLimits
    /// Which threads poll the bus sockets and run the handlers (deploy/BUS.md, "Threads").
    public var eventLoop: BusEventLoopMode

    public struct Peer: Sendable {
        public var rpc: [String]
        public var events: [String]
        public var publicKey: String?
    }

    public init(defaultRPCBind: String, defaultEventsBind: String, environment env: EnvironmentReader) throws {
        rpcBind = env.list("RPC_BIND", default: [defaultRPCBind], "Endpoints this service's RPC (ROUTER) socket binds, comma-separated.")
        eventsBind = env.list("EVENTS_BIND", default: [defaultEventsBind], "Endpoints this service's event (PUB) socket binds.")
        let secret = env.secret(
            "BUS_SECRET_KEY", default: "",
            "This process's CURVE secret key (Z85, 40 characters; `compass keys generate`). Empty: plaintext bus, local development only.")
        if secret.revealed.isEmpty {
            keys = nil
        } else {
            do { keys = try CurveKeyPair(secretKey: secret.revealed) } catch {
                throw ConfigurationError(variable: "BUS_SECRET_KEY", value: nil, expected: "a 40-character Z85 CURVE secret key")
            }
        }
        var admitted: [String: String] = [:]
        for entry in env.list(
            "BUS_ADMITTED_KEYS", default: [], "Client public keys this service admits, as name=publickey pairs, comma-separated (CURVE only).")
        {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[1].utf8.count == 40, !parts[0].isEmpty else {
                throw ConfigurationError(variable: "BUS_ADMITTED_KEYS", value: entry, expected: "name=<40-character Z85 public key>")
            }
            admitted[parts[1]] = parts[0]
        }
        self.admitted = admitted
        principalAsserters = Set(
            env.list(
                "BUS_PRINCIPAL_ASSERTERS", default: ["gateway", "operator", "accounts"],
                "Admitted peers whose `principal` (the user a request acts for) is honoured; other peers act as themselves."))
        servicesActingForUsers = Set(
            env.list(
                "BUS_SERVICES_ACTING_FOR_USERS", default: ["gateway", "accounts"],
                "Peers whose own service principal may read or write any user's records (CURVE only); any other admitted service acting as itself is refused with `forbidden` where a user's data is concerned."
            ))
        var peers: [ServiceName: Peer] = [:]
        for peer in ServiceName.allCases {
            let prefix = peer.variablePrefix
            peers[peer] = Peer(
                rpc: env.list(
                    "\(prefix)_RPC_ENDPOINTS", default: [peer.defaultRPCEndpoint],
                    "Where to reach the \(peer.rawValue) service's RPC socket (several: requests spread over them)."),
                events: env.list(
                    "\(prefix)_EVENTS_ENDPOINTS", default: [peer.defaultEventsEndpoint],
                    "Where to subscribe to the \(peer.rawValue) service's events."),
                publicKey: env.string("\(prefix)_PUBLIC_KEY", default: "", "The \(peer.rawValue) service's CURVE public key (when the bus is CURVE).")
                    .nilIfEmpty)
        }
        self.peers = peers
        eventLoop = try Self.eventLoop(env)
        let defaults = IdempotencyLimits()
        idempotency = IdempotencyLimits(
            entries: try env.int(
                "BUS_IDEMPOTENCY_MAX_ENTRIES", default: defaults.entries, in: 0...10_000_000,
                "Replies to retryable writes this service keeps at most, to answer a retry with the same idempotency key from them (reads are never kept)."
            ),
            bytes: try env.int(
                "BUS_IDEMPOTENCY_MAX_BYTES", default: defaults.bytes, in: 0...(1 << 40),
                "Bytes of those replies (payload and attachments, plus 512 per entry) kept at most; the oldest go first. Size it well under the service's memory limit."
            ),
            age: try env.duration(
                "BUS_IDEMPOTENCY_MAX_AGE", default: defaults.age,
                "How long after its completion a write's reply is repeated to a retry; after it, the same key runs again (stores keep their own durable keys)."
            ))
    }

    /// `BUS_EVENT_LOOP`, read here for every process that opens bus sockets (the services and the
    /// gateway), so an unknown value is refused at start with the same message everywhere.
    public static func eventLoop(_ env: EnvironmentReader) throws(ConfigurationError) -> BusEventLoopMode {
        try env.choice(
            BusEventLoopMode.variable, default: BusEventLoopMode.defaultMode,
            "Which threads poll this process's bus sockets: `single`, one event loop thread for every socket, which also runs the request handlers (a request stays on one thread from its socket through its handler); `per-socket`, a thread per socket, handlers on the cooperative pool."
        )
    }

    public var serverSecurity: ServerSecurity {
        guard let keys else { return .plaintext }
        return .curve(keys, admitted: ZAPPolicy(admitted: admitted))
    }

    /// Client security towards `peer`; CURVE needs the peer's public key.
    public func clientSecurity(for peer: ServiceName) throws -> ClientSecurity {
        guard let keys else { return .plaintext }
        guard let serverKey = peers[peer]?.publicKey else {
            throw ConfigurationError.missing(
                "\(peer.variablePrefix)_PUBLIC_KEY", expected: "the \(peer.rawValue) service's CURVE public key, since BUS_SECRET_KEY is set")
        }
        return .curve(keys, serverPublicKey: serverKey)
    }

    public var serverOptions: RPCServerOptions {
        var options = RPCServerOptions()
        options.principalAsserters = principalAsserters
        options.idempotency = idempotency
        // Over plaintext every claimed principal is honoured anyway (development only), so the
        // allow-list only means something with CURVE identities.
        if keys != nil { options.servicesActingForUsers = servicesActingForUsers }
        return options
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
