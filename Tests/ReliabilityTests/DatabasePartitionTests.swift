import Bus
import Contracts
import Foundation
import TestSupport
import Testing

extension ReliabilityTests {
    /// PostgreSQL that stops answering without closing anything, under load: frozen (every
    /// server process SIGSTOPped, as a stalled host) and black-holed (its TCP port's packets
    /// dropped by iptables, as a primary that vanished from the network). Calls fail `unavailable`
    /// or `deadline_exceeded` within their deadlines, the gateway answers 503/504 and never hangs,
    /// the services recover by themselves once it is back, and nothing acknowledged is lost.
    ///
    /// The black-hole case runs with a 3 s `DATABASE_TCP_USER_TIMEOUT`, shorter than the outage,
    /// so the services' connections are declared dead by the kernel during it and recovery goes
    /// through reconnecting, as it would after a fail-over.
    @Suite("Reliability: PostgreSQL frozen or black-holed under load")
    struct DatabasePartitionTests {
        static let callTimeout: Duration = .seconds(2)
        static let slack: Duration = .seconds(2)
        static let outage: Duration = .seconds(6)

        enum Fault: String, CaseIterable, Sendable { case freeze, blackhole }

        @Test(arguments: Fault.allCases)
        func servicesRideOutAnUnansweringDatabase(fault: Fault) async throws {
            if fault == .blackhole, await !LoopbackBlackHole.isAvailable() {
                Issue.record("iptables is needed (as root) for the black-hole case")
                return
            }
            let limits = fault == .blackhole ? ["DATABASE_TCP_USER_TIMEOUT": "3s"] : [:]
            try await TestDatabase.withExclusiveCluster(maxConnections: 1) { _ in
                try await Stack.run(
                    exclusive: false, gateway: true,
                    settings: ["Gateway": ["GATEWAY_BUS_TIMEOUT": "2s"], "Audit": limits, "Accounts": limits, "Legal": limits, "Documents": limits]
                ) { stack in
                    let terms = try await stack.currentTerms()
                    let outcomes = Outcomes()
                    let httpUser = try await stack.signUp(terms: terms)
                    let http = GatewayHTTP(port: try stack.gatewayPort(), connections: 4)
                    defer { http.close() }
                    let probes = HTTPProbes()
                    let stopLoad = Flag()
                    let load = OutageLoad.auditWriters(
                        stack, terms: terms, keyPrefix: "\(fault.rawValue)", timeout: Self.callTimeout, outcomes: outcomes, until: stopLoad)
                    try await withTimeout(.seconds(30), "the load to start") {
                        while outcomes.acknowledgedCount < 200 { try await Task.sleep(for: .milliseconds(5)) }
                    }
                    let stopProbes = Flag()
                    let probing = OutageLoad.gatewayProbes(
                        http, user: httpUser, terms: terms, keyPrefix: "probe-\(fault.rawValue)", probes: probes, until: stopProbes)
                    // The fault, for the outage; lifted whatever happens.
                    let began = ContinuousClock.now
                    let lift = try await Self.apply(fault)
                    try? await Task.sleep(for: Self.outage)
                    try await lift()
                    let acknowledgedAtLift = outcomes.acknowledgedCount
                    let lifted = ContinuousClock.now
                    let recovery = try await withTimeout(.seconds(60), "Audit acknowledging again after the \(fault.rawValue)") {
                        while outcomes.acknowledgedCount < acknowledgedAtLift + 50 { try await Task.sleep(for: .milliseconds(5)) }
                        return ContinuousClock.now - lifted
                    }
                    stopLoad.set()
                    await load.value
                    let gatewayRecovery = try await withTimeout(.seconds(60), "the gateway answering 2xx again") {
                        while probes.lastStatus.map({ !(200..<300).contains($0) }) ?? true { try await Task.sleep(for: .milliseconds(50)) }
                        return ContinuousClock.now - lifted
                    }
                    stopProbes.set()
                    await probing.value

                    #expect(try await stack.currentTerms() == terms)
                    _ = try await stack.signUp(terms: terms)
                    let summary = outcomes.summary
                    let stored = try await stack.withDatabase { db in
                        try Set(db.query("SELECT record_id FROM audit.records").map { try $0.decode(UUID.self, column: 0) })
                    }
                    let lost = summary.acknowledged.filter { !stored.contains($0) }
                    #expect(lost.isEmpty, "\(lost.count) of \(summary.acknowledged.count) acknowledged records are missing")
                    let allowed: Set<ErrorCode?> = [.unavailable, .deadlineExceeded]
                    #expect(summary.failures.values.reduce(0, +) > 0, "no call failed during a \(Self.outage) \(fault.rawValue)")
                    #expect(summary.failures.keys.allSatisfy { allowed.contains($0) }, "failures: \(summary.failures)")
                    #expect(summary.slowest <= Self.callTimeout + Self.slack, "a call took \(summary.slowest)")
                    let seen = probes.summary
                    #expect(
                        seen.statuses.keys.allSatisfy { (200..<300).contains($0) || $0 == 503 || $0 == 504 }, "gateway statuses: \(seen.statuses)")
                    #expect(seen.unanswered == 0, "\(seen.unanswered) gateway requests got no response")
                    #expect(seen.slowest <= .seconds(2) + Self.slack, "a gateway request took \(seen.slowest)")
                    print(
                        "RELIABILITY pg-\(fault.rawValue) outage=\(Self.outage) acknowledged=\(summary.acknowledged.count) lost=\(lost.count) failures=\(summary.failures.map { "\($0.key?.rawValue ?? "other")=\($0.value)" }.sorted()) slowest-call=\(summary.slowest) recovery-after-lift=\(recovery) gateway-2xx-after-lift=\(gatewayRecovery) gateway=\(seen.statuses.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }) fault-began=\(lifted - began) ago"
                    )
                }
            }
        }

        /// Applies `fault` to the test cluster; returns what lifts it.
        static func apply(_ fault: Fault) async throws -> @Sendable () async throws -> Void {
            switch fault {
            case .freeze:
                let pids = try clusterProcesses()
                // Children first, so none runs on while its postmaster is already stopped.
                for pid in pids.reversed() { kill(pid, SIGSTOP) }
                return { for pid in pids { kill(pid, SIGCONT) } }
            case .blackhole:
                return try await LoopbackBlackHole.drop(port: try clusterPort())
            }
        }

        /// The postmaster (first) and its children, from the cluster's `postmaster.pid` and /proc.
        static func clusterProcesses() throws -> [pid_t] {
            guard let directory = ProcessInfo.processInfo.environment["COMPASS_PG_DIR"],
                let pidFile = try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8),
                let postmaster = pid_t(pidFile.split(separator: "\n").first ?? "")
            else { throw TestSupportError("COMPASS_PG_DIR/data/postmaster.pid is not readable") }
            let children = (try FileManager.default.contentsOfDirectory(atPath: "/proc")).compactMap { entry -> pid_t? in
                guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                    let close = stat.lastIndex(of: ")")
                else { return nil }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                return fields.count > 1 && pid_t(fields[1]) == postmaster ? pid : nil
            }
            return [postmaster] + children
        }

        static func clusterPort() throws -> String {
            guard let port = URLComponents(string: try TestDatabase.url())?.port else { throw TestSupportError("DATABASE_URL has no port") }
            return String(port)
        }
    }
}
