import Locks
import Metrics

/// The bus's own counters (swift-metrics; exported by whatever backend the process bootstraps).
/// Counters per label are made once and kept: creating them per message costs a lookup and lock.
final class BusMetrics: Sendable {
    private let counters = LockedValue<[String: Counter]>([:])
    private let callTimers = LockedValue<[String: Timer]>([:])
    private let component: String

    init(component: String) { self.component = component }

    func increment(_ name: String, _ dimensions: [(String, String)] = []) {
        let key = name + dimensions.map { "|\($0.0)=\($0.1)" }.joined()
        counters.kept(key) { Counter(label: name, dimensions: [("component", component)] + dimensions) }.increment()
    }

    /// Records a call's time from send to reply (`bus_rpc_call_seconds`, a histogram in seconds
    /// under Prometheus). Kept by message type alone: this runs on every call, so it builds no
    /// label key the way ``increment(_:_:)`` does.
    func recordCall(_ type: String, _ duration: Duration) {
        callTimers.kept(type) { Timer(label: "bus_rpc_call_seconds", dimensions: [("component", component), ("type", type)]) }
            .record(duration: duration)
    }
}
