/// The outcome of one readiness check: `ok`, or why the service should not get traffic yet.
public enum ReadinessStatus: Sendable, Equatable, CustomStringConvertible {
    case ready
    /// Serving, but part of what the check covers is down: traffic still belongs here (the
    /// gateway with one backend down serves every other route), and `/readyz` shows why.
    case degraded(String)
    /// Not ready, with a short reason an operator can act on, e.g. `unreachable: connection refused`.
    case notReady(String)

    /// `ok`, `degraded: <reason>`, or the reason: the value shown per check by `/readyz`.
    public var description: String {
        switch self {
        case .ready: "ok"
        case .degraded(let reason): "degraded: " + reason
        case .notReady(let reason): reason
        }
    }

    /// Whether this check lets the service take traffic: ready or degraded.
    public var allowsTraffic: Bool {
        if case .notReady = self { return false }
        return true
    }
}

/// A named dependency check a service registers, e.g. `database` pinging PostgreSQL.
///
/// Checks run periodically off the request path (see ``ReadinessPoller``); `/readyz` only reads
/// their last results. A check should be quick and honour task cancellation; one that overruns its
/// timeout is reported as timed out and is not started again until it has returned.
public struct ReadinessCheck: Sendable {
    public let name: String
    public let run: @Sendable () async -> ReadinessStatus

    /// A check that reports its status itself.
    public init(_ name: String, _ run: @escaping @Sendable () async -> ReadinessStatus) {
        self.name = name
        self.run = run
    }

    /// A check that is ready when `body` returns and not ready, with the error's description, when it throws.
    public init(_ name: String, throwing body: @escaping @Sendable () async throws -> Void) {
        self.init(name) {
            do {
                try await body()
                return .ready
            } catch {
                return .notReady(String(describing: error))
            }
        }
    }
}
