import ServiceKit

/// Where each process of a local stack listens. The default is DESIGN.md §2's layout (RPC 555N,
/// events 565N, health 575N, the gateway's HTTP 8080 and health 5750); a base port moves the whole
/// stack (RPC base+N, events base+10+N, health base+20+N, gateway HTTP base+30 and health base+20)
/// so two stacks, or a test, can run side by side. The gateway's readiness is read on its HTTP port.
struct StackLayout: Sendable {
    struct Member: Sendable {
        /// The executable's name, e.g. `Legal`.
        let executable: String
        /// The bus service, nil for the gateway.
        let service: ServiceName?
        let rpcPort: Int?
        let eventsPort: Int?
        /// Where `/healthz`, `/readyz` and `/metrics` are read (the gateway's API port has only
        /// `/healthz` unless `GATEWAY_PUBLIC_OPERATIONS` is on).
        let healthPort: Int
        /// The gateway's HTTP port.
        let httpPort: Int?

        var name: String { service?.rawValue ?? "gateway" }
    }

    let host = "127.0.0.1"
    let members: [Member]

    /// Start order: Legal first (Audit and Accounts load its versions), the gateway last.
    static let order: [ServiceName] = [.legal, .audit, .accounts, .documents]

    init(basePort: Int?) {
        var members = Self.order.map { service in
            let index = service.defaultHealthPort - 5750
            return Member(
                executable: service.rawValue.prefix(1).uppercased() + service.rawValue.dropFirst(), service: service,
                rpcPort: basePort.map { $0 + index } ?? 5550 + index,
                eventsPort: basePort.map { $0 + 10 + index } ?? 5650 + index,
                healthPort: basePort.map { $0 + 20 + index } ?? service.defaultHealthPort,
                httpPort: nil)
        }
        let gatewayPort = basePort.map { $0 + 30 } ?? 8080
        members.append(
            Member(
                executable: "Gateway", service: nil, rpcPort: nil, eventsPort: nil, healthPort: basePort.map { $0 + 20 } ?? 5750,
                httpPort: gatewayPort))
        self.members = members
    }

    func rpcEndpoint(_ member: Member) -> String? { member.rpcPort.map { "tcp://\(host):\($0)" } }
    func eventsEndpoint(_ member: Member) -> String? { member.eventsPort.map { "tcp://\(host):\($0)" } }

    /// The bus variables every process of the stack gets: where each service is.
    var peerEnvironment: [String: String] {
        var environment: [String: String] = [:]
        for member in members {
            guard let service = member.service else { continue }
            environment["\(service.variablePrefix)_RPC_ENDPOINTS"] = rpcEndpoint(member)
            environment["\(service.variablePrefix)_EVENTS_ENDPOINTS"] = eventsEndpoint(member)
        }
        return environment
    }

    /// One member's own variables: what it binds.
    func ownEnvironment(_ member: Member) -> [String: String] {
        var environment = ["HEALTH_HOST": host, "HEALTH_PORT": String(member.healthPort)]
        if let http = member.httpPort {
            environment["GATEWAY_HTTP_HOST"] = host
            environment["GATEWAY_HTTP_PORT"] = String(http)
        }
        if let rpc = rpcEndpoint(member), let events = eventsEndpoint(member) {
            environment["RPC_BIND"] = rpc
            environment["EVENTS_BIND"] = events
        }
        return environment
    }
}
