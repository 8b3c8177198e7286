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

    /// The same for a service with roles of its own in `database` (what deployments do): its
    /// runtime role's `DATABASE_URL` and its schema owner's `DATABASE_MIGRATION_URL`.
    public static func make(
        database: TestDatabaseInstance, schema: String, rpc: String, events: String = ipcEndpoint(), logLevel: String = "warning"
    ) async throws -> [String: String] {
        var environment = make(databaseURL: database.url, rpc: rpc, events: events, logLevel: logLevel)
        environment.merge(try await database.serviceEnvironment(schema)) { _, role in role }
        return environment
    }
}
