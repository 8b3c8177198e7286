import ArgumentParser
import Foundation

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

    func run() async throws {
        let layout = StackLayout(basePort: basePort)
        var healthy = true
        for member in layout.members {
            let health = await HTTPProbe.get("http://\(layout.host):\(member.healthPort)/healthz")
            let ready = await HTTPProbe.get("http://\(layout.host):\(member.healthPort)/readyz")
            let endpoints = [layout.rpcEndpoint(member), layout.eventsEndpoint(member)].compactMap { $0 }
            let bus = endpoints.isEmpty ? "http://\(layout.host):\(member.healthPort)" : "rpc \(endpoints[0]) events \(endpoints[1])"
            guard let health, health.status == 200, let body = health.json else {
                print("\(member.name.padding(toLength: 10, withPad: " ", startingAt: 0)) DOWN       \(bus)")
                healthy = false
                continue
            }
            let version = body["version"] as? String ?? "?"
            let uptime = body["uptimeSeconds"] as? Int ?? 0
            let isReady = ready?.status == 200
            healthy = healthy && isReady
            var line = "\(member.name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(isReady ? "ready    " : "NOT READY") "
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
