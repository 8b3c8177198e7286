import Locks
import Metrics
import Prometheus

/// Installs swift-prometheus as swift-metrics' backend, once per process, and renders what it has
/// collected in the Prometheus text format that `/metrics` serves.
///
/// swift-metrics allows one `MetricsSystem.bootstrap` per process (a second one traps), so
/// ``bootstrap()`` makes the registry on its first call and returns that same registry on every
/// later call. Code that records metrics uses swift-metrics' `Counter`, `Timer`, `Gauge`, … and never
/// sees Prometheus.
public enum MetricsBootstrap {
    private static let installed = LockedValue<PrometheusCollectorRegistry?>(nil)

    /// The process-wide registry, installed into swift-metrics on the first call.
    @discardableResult
    public static func bootstrap() -> PrometheusCollectorRegistry {
        installed.withLock { installed in
            if let registry = installed { return registry }
            let registry = PrometheusCollectorRegistry()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
            installed = registry
            return registry
        }
    }

    /// The Prometheus text exposition (format 0.0.4) of everything `registry` holds.
    public static func exposition(of registry: PrometheusCollectorRegistry) -> String {
        registry.emitToString()
    }

    /// The `Content-Type` of ``exposition(of:)``.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"
}
