import Logging

/// The settings every service reads, from these environment variables:
///
/// | Variable | Default | Description |
/// | --- | --- | --- |
/// | `SERVICE_VERSION` | given by the service (`dev`) | Version reported by `/healthz` and in logs. |
/// | `LOG_FORMAT` | `text` | `text` for people, `json` for log collectors. |
/// | `LOG_LEVEL` | `info` | `trace`, `debug`, `info`, `notice`, `warning`, `error`, `critical`. |
/// | `HEALTH_HOST` | `127.0.0.1` | Address of `/healthz`, `/readyz`, `/metrics`; `0.0.0.0` in containers. |
/// | `HEALTH_PORT` | given by the service | Port of the health server; 0 picks a free one. |
/// | `READINESS_INTERVAL` | `1s` | How often readiness checks run. |
/// | `READINESS_TIMEOUT` | `2s` | How long one readiness check may take before it counts as failed. |
/// | `SHUTDOWN_TIMEOUT` | `30s` | How long graceful shutdown may take before the remaining services are cancelled. |
///
/// Each service process has its own environment, so one variable name serves every service; the
/// default health port differs per service and is passed by its `main`.
public struct CommonConfiguration: Sendable {
    public var version: String
    public var logFormat: LogFormat
    public var logLevel: Logger.Level
    public var health: Endpoint
    public var readinessInterval: Duration
    public var readinessTimeout: Duration
    public var shutdownTimeout: Duration

    public init(environment: EnvironmentReader, defaultVersion: String = "dev", defaultHealthPort: Int)
        throws(ConfigurationError)
    {
        version = environment.string("SERVICE_VERSION", default: defaultVersion, "Version reported by /healthz and in logs.")
        logFormat = try environment.choice("LOG_FORMAT", default: .text, "Log line format: text for people, json for log collectors.")
        logLevel = try environment.choice("LOG_LEVEL", default: Logger.Level.info, "Lowest level logged: \(Logger.Level.names).")
        let host = environment.string(
            "HEALTH_HOST", default: "127.0.0.1", "Numeric address of /healthz, /readyz and /metrics (0.0.0.0 in containers).")
        let port = try environment.int(
            "HEALTH_PORT", default: defaultHealthPort, in: 0...65535, "Port of the health server; 0 picks a free port.")
        health = Endpoint(host: host, port: port)
        readinessInterval = try environment.duration("READINESS_INTERVAL", default: .seconds(1), "How often readiness checks run.")
        readinessTimeout = try environment.duration(
            "READINESS_TIMEOUT", default: .seconds(2), "How long one readiness check may take before it counts as failed.")
        shutdownTimeout = try environment.duration(
            "SHUTDOWN_TIMEOUT", default: .seconds(30),
            "How long graceful shutdown may take before the remaining services are cancelled.")
    }
}
