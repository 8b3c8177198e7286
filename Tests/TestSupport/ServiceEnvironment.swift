import Foundation

/// The environment a service executable gets when a test or benchmark starts it: this process's
/// environment plus its database, its bind addresses, a free health port and a log level.
public enum ServiceEnvironment {
    public static func make(
        databaseURL: String, rpc: String, events: String = ipcEndpoint(), logLevel: String = "warning"
    ) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = databaseURL
        environment["RPC_BIND"] = rpc
        environment["EVENTS_BIND"] = events
        environment["HEALTH_PORT"] = "0"
        environment["LOG_LEVEL"] = logLevel
        return environment
    }
}
