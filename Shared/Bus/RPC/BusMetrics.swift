import Locks
import Metrics

/// The bus's own counters (swift-metrics; exported by whatever backend the process bootstraps).
/// Counters per label are made once and kept: creating them per message costs a lookup and lock.
final class BusMetrics: Sendable {
    private let counters = LockedValue<[String: Counter]>([:])
    private let timers = LockedValue<[String: Timer]>([:])
    private let component: String

    init(component: String) { self.component = component }

    func increment(_ name: String, _ dimensions: [(String, String)] = []) {
        let key = name + dimensions.map { "|\($0.0)=\($0.1)" }.joined()
        counters.kept(key) { Counter(label: name, dimensions: [("component", component)] + dimensions) }.increment()
    }

    /// Records one duration on the timer `name` (a histogram in seconds under Prometheus).
    func record(_ name: String, _ dimensions: [(String, String)], _ duration: Duration) {
        let key = name + dimensions.map { "|\($0.0)=\($0.1)" }.joined()
        timers.kept(key) { Timer(label: name, dimensions: [("component", component)] + dimensions) }.record(duration: duration)
    }
}
