import Bus
import Contracts
import Foundation
import Locks
import TestSupport
import Testing

extension ReliabilityTests {
    /// PostgreSQL restarted (fast and immediate shutdown) under load: calls fail `unavailable` or
    /// `deadline_exceeded` while it is down and never hang past their deadlines; the services
    /// reconnect by themselves and nothing acknowledged is lost. The HTTP gateway in front answers
    /// 503 (or 504 at its bus deadline) meanwhile, never hangs, and serves again afterwards. The
    /// cluster is the shared test cluster, taken exclusively (no other database test runs
    /// meanwhile), as `ReconnectTests` does.
    @Suite("Reliability: PostgreSQL restart under load")
    struct DatabaseRestartTests {
        /// How long each call may take; a call that returns later than this plus the slack hung.
        static let callTimeout: Duration = .seconds(2)
        static let slack: Duration = .seconds(2)
        /// How long the cluster stays down: longer than a call's deadline, so callers must see it.
        static let outage: Duration = .seconds(4)
        /// The gateway's deadline for one bus call (`GATEWAY_BUS_TIMEOUT`): a 504 past it.
        static let gatewayBusTimeout: Duration = .seconds(2)

        @Test(arguments: [RestartMode.fast, .immediate])
        func servicesRideOutARestart(mode: RestartMode) async throws {
            try await TestDatabase.withExclusiveCluster(maxConnections: 1) { _ in
                try await Stack.run(exclusive: false, gateway: true, settings: ["Gateway": ["GATEWAY_BUS_TIMEOUT": "2s"]]) { stack in
                    let terms = try await stack.currentTerms()
                    let outcomes = Outcomes()
                    let httpUser = try await stack.signUp(terms: terms)
                    let http = GatewayHTTP(port: try stack.gatewayPort(), connections: 4)
                    defer { http.close() }
                    let probes = HTTPProbes()
                    let stopLoad = Flag()
                    // A steady load of writers, each a fresh user and key, until told to stop.
                    let load = OutageLoad.auditWriters(
                        stack, terms: terms, keyPrefix: "restart", timeout: Self.callTimeout, outcomes: outcomes, until: stopLoad)
                    try await withTimeout(.seconds(30), "the load to start") {
                        while outcomes.acknowledgedCount < 200 { try await Task.sleep(for: .milliseconds(5)) }
                    }
                    // One seed `accept-tos` through the gateway every 100 ms from just before the
                    // restart until the services acknowledge again.
                    let stopProbes = Flag()
                    let probing = OutageLoad.gatewayProbes(
                        http, user: httpUser, terms: terms, keyPrefix: "probe-\(mode.rawValue)", probes: probes, until: stopProbes)
                    let restartBegan = ContinuousClock.now
                    try await TestDatabase.restartCluster(mode: mode, downFor: Self.outage)
                    let restartTook = ContinuousClock.now - restartBegan
                    let acknowledgedAtRestart = outcomes.acknowledgedCount
                    // Recovery: the first acknowledgement after the cluster is back.
                    let recovery = try await withTimeout(.seconds(30), "Audit acknowledging again after the restart") {
                        while outcomes.acknowledgedCount < acknowledgedAtRestart + 50 { try await Task.sleep(for: .milliseconds(5)) }
                        return ContinuousClock.now - restartBegan - restartTook
                    }
                    stopLoad.set()
                    await load.value
                    // The gateway serves again once the services do.
                    try await withTimeout(.seconds(30), "the gateway answering 2xx again") {
                        while probes.lastStatus.map({ !(200..<300).contains($0) }) ?? true { try await Task.sleep(for: .milliseconds(50)) }
                    }
                    stopProbes.set()
                    await probing.value

                    // Every other service reconnected by itself too.
                    #expect(try await stack.currentTerms() == terms)
                    _ = try await stack.signUp(terms: terms)
                    _ = try await stack.documents.call(DocumentsUsage.self, .init(userId: UUID()), principal: .service("accounts"))

                    let summary = outcomes.summary
                    let stored = try await stack.database.pool.withConnection { db in
                        try Set(db.query("SELECT record_id FROM audit.records").map { try $0.decode(UUID.self, column: 0) })
                    }
                    let lost = summary.acknowledged.filter { !stored.contains($0) }
                    #expect(lost.isEmpty, "\(lost.count) of \(summary.acknowledged.count) acknowledged records are missing")
                    let allowed: Set<ErrorCode?> = [.unavailable, .deadlineExceeded]
                    #expect(summary.failures.values.reduce(0, +) > 0, "no call failed during a \(Self.outage) outage")
                    #expect(summary.failures.keys.allSatisfy { allowed.contains($0) }, "failures: \(summary.failures)")
                    #expect(summary.slowest <= Self.callTimeout + Self.slack, "a call took \(summary.slowest)")
                    let seen = probes.summary
                    #expect(
                        seen.statuses[503, default: 0] + seen.statuses[504, default: 0] > 0,
                        "the gateway never said 503/504 while the database was down: \(seen.statuses)")
                    #expect(
                        seen.statuses.keys.allSatisfy { (200..<300).contains($0) || $0 == 503 || $0 == 504 }, "gateway statuses: \(seen.statuses)")
                    #expect(seen.unanswered == 0, "\(seen.unanswered) gateway requests got no response")
                    #expect(seen.slowest <= Self.gatewayBusTimeout + Self.slack, "a gateway request took \(seen.slowest)")
                    print(
                        "RELIABILITY pg-restart-\(mode.rawValue)-gateway statuses=\(seen.statuses.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }) unanswered=\(seen.unanswered) slowest=\(seen.slowest)"
                    )
                    print(
                        "RELIABILITY pg-restart-\(mode.rawValue) acknowledged=\(summary.acknowledged.count) lost=\(lost.count) failures=\(summary.failures.map { "\($0.key?.rawValue ?? "other")=\($0.value)" }.sorted()) slowest-call=\(summary.slowest) restart-script=\(restartTook) recovery-after-restart=\(recovery)"
                    )
                }
            }
        }
    }
}

/// What the load saw: acknowledged record ids, failures by code, the slowest call.
final class Outcomes: Sendable {
    struct Summary {
        var acknowledged: [UUID] = []
        var failures: [ErrorCode?: Int] = [:]
        var slowest: Duration = .zero
    }
    private let state = LockedValue(Summary())

    func acknowledge(_ id: UUID, took: Duration) {
        state.withLock {
            $0.acknowledged.append(id)
            $0.slowest = max($0.slowest, took)
        }
    }

    func fail(_ code: ErrorCode?, took: Duration) {
        state.withLock {
            $0.failures[code, default: 0] += 1
            $0.slowest = max($0.slowest, took)
        }
    }

    var acknowledgedCount: Int { state.withLock { $0.acknowledged.count } }
    var summary: Summary { state.withLock { $0 } }
}

/// What the gateway answered the probe requests: statuses, requests without a response, the slowest.
final class HTTPProbes: Sendable {
    struct Summary {
        var statuses: [Int: Int] = [:]
        var unanswered = 0
        var slowest: Duration = .zero
        var last: Int?
    }
    private let state = LockedValue(Summary())

    func record(_ status: Int?, took: Duration) {
        state.withLock {
            if let status { $0.statuses[status, default: 0] += 1 } else { $0.unanswered += 1 }
            $0.last = status
            $0.slowest = max($0.slowest, took)
        }
    }

    var lastStatus: Int? { state.withLock { $0.last } }
    var summary: Summary { state.withLock { $0 } }
}
