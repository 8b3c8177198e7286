import ArgumentParser
import Foundation
import ServiceKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `compass status`: each process's health, version, uptime, readiness (which covers its
/// database and bus peers) and bus endpoints.
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show each service's health, version, uptime, readiness and bus endpoints.",
        discussion: "Exits 1 when any service is down or not ready.")

    @Option(help: "The base port the stack was started with (`compass up --base-port`); DESIGN.md defaults otherwise.")
    var basePort: Int?

    @Option(
        name: .customLong("health"),
        help: ArgumentHelp(
            "A process's health server as name=URL (e.g. legal=http://legal:8081), once per process: for a deployment "
                + "that is not `compass up`'s layout (compose, Kubernetes). Bus endpoints are then the *_RPC_ENDPOINTS "
                + "and *_EVENTS_ENDPOINTS variables.",
            valueName: "name=url"))
    var health: [String] = []

    /// What to probe: each process's name, health server and bus endpoints (for the listing).
    struct Target {
        let name: String
        let healthURL: String
        let bus: String
    }

    func targets() throws -> [Target] {
        guard !health.isEmpty else {
            let layout = StackLayout(basePort: basePort)
            return layout.members.map { member in
                let endpoints = [layout.rpcEndpoint(member), layout.eventsEndpoint(member)].compactMap { $0 }
                let url = "http://\(layout.host):\(member.healthPort)"
                return Target(
                    name: member.name, healthURL: url,
                    bus: endpoints.isEmpty ? url : "rpc \(endpoints[0]) events \(endpoints[1])")
            }
        }
        let environment = ProcessInfo.processInfo.environment
        return try health.map { entry in
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, let url = URL(string: parts[1]), url.scheme?.hasPrefix("http") == true
            else { throw ValidationError("--health takes name=URL (e.g. legal=http://legal:8081), not \"\(entry)\"") }
            let base = parts[1].hasSuffix("/") ? String(parts[1].dropLast()) : parts[1]
            let prefix = ServiceName(rawValue: parts[0])?.variablePrefix
            let rpc = prefix.flatMap { environment["\($0)_RPC_ENDPOINTS"] }
            let events = prefix.flatMap { environment["\($0)_EVENTS_ENDPOINTS"] }
            let bus = rpc.map { "rpc \($0)" + (events.map { " events \($0)" } ?? "") } ?? base
            return Target(name: parts[0], healthURL: base, bus: bus)
        }
    }

    func run() async throws {
        var healthy = true
        for target in try targets() {
            let health = await HTTPProbe.get("\(target.healthURL)/healthz")
            let ready = await HTTPProbe.get("\(target.healthURL)/readyz")
            let bus = target.bus
            guard let health, health.status == 200, let body = health.json else {
                print("\(target.name.padding(toLength: 10, withPad: " ", startingAt: 0)) DOWN       \(bus)")
                healthy = false
                continue
            }
            let version = body["version"] as? String ?? "?"
            let uptime = body["uptimeSeconds"] as? Int ?? 0
            let isReady = ready?.status == 200
            healthy = healthy && isReady
            var line = "\(target.name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(isReady ? "ready    " : "NOT READY") "
            line += " version \(version), up \(uptime) s, \(bus)"
            print(line)
            // `{"ready":false,"status":"running","checks":{"database":"ok","bus":"unreachable: …"}}`
            if !isReady, let checks = ready?.json?["checks"] as? [String: String] {
                for (name, state) in checks.sorted(by: { $0.key < $1.key }) where state != "ok" {
                    print("           \(name): \(state)")
                }
            }
        }
        if !healthy { throw ExitCode(1) }
    }
}

/// A short GET for health endpoints: nil when nothing answers.
enum HTTPProbe {
    struct Response {
        let status: Int
        let body: Data
        var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
    }

    static func get(_ url: String, timeout: TimeInterval = 2) async -> Response? {
        guard let url = URL(string: url) else { return nil }
        var request = URLRequest(url: url)
        request.timeoutInterval = timeout
        guard let (data, response) = try? await URLSession.shared.data(for: request),
            let http = response as? HTTPURLResponse
        else { return nil }
        return Response(status: http.statusCode, body: data)
    }
}
