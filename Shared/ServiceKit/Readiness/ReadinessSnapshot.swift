import BusCore

/// The last known readiness of a service: what `/readyz` answers.
public struct ReadinessSnapshot: Sendable, Equatable {
    public enum Phase: String, Sendable {
        /// The checks have not completed a first round yet.
        case starting
        /// The checks run periodically; ``checks`` is current.
        case running
        /// Graceful shutdown has begun: stop sending traffic here, whatever the checks say.
        case shuttingDown = "shutting down"
    }

    public var phase: Phase
    /// The latest status of each check by name.
    public var checks: [String: ReadinessStatus]

    public init(phase: Phase = .starting, checks: [String: ReadinessStatus] = [:]) {
        self.phase = phase
        self.checks = checks
    }

    /// Ready for traffic: checks running and every one of them ok or degraded.
    public var isReady: Bool {
        phase == .running && checks.values.allSatisfy(\.allowsTraffic)
    }

    /// `{"ready":false,"status":"running","checks":{"bus":"unreachable: ...","database":"ok"}}`,
    /// checks sorted by name.
    var json: String {
        let checkMembers = checks.sorted { $0.key < $1.key }.map { (key: $0.key, encodedValue: JSONString.quoted($0.value.description)) }
        return JSONString.object([
            ("ready", isReady ? "true" : "false"),
            ("status", JSONString.quoted(phase.rawValue)),
            ("checks", JSONString.object(checkMembers)),
        ])
    }
}
