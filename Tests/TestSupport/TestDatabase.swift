import Foundation
import Logging
import Postgres

/// Errors from the test helpers themselves (missing environment, failed scripts).
public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One test's private schema: a pool whose connections have `search_path` set to it, so tests
/// create unqualified tables without colliding with tests running in parallel.
public struct TestSchema: Sendable {
    public let name: String
    public let pool: PostgresPool
    /// The configuration the pool uses (with the schema's `search_path`).
    public let configuration: PostgresConfiguration
    public let logger: Logger
}

/// Database helpers shared by every test target. Database tests never skip: without
/// `DATABASE_URL` they fail with instructions.
public enum TestDatabase {
    public static let missingURLMessage =
        "DATABASE_URL is not set: run deploy/test, which starts a throwaway PostgreSQL"

    /// `DATABASE_URL`, or an error telling how to get one.
    public static func url() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["DATABASE_URL"], !url.isEmpty else {
            throw TestSupportError(missingURLMessage)
        }
        return url
    }

    /// A logger for tests; `LOG_LEVEL` (trace…critical) sets its level, `warning` by default.
    public static func logger(_ label: String = "tests") -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .warning
        return logger
    }

    /// Runs `body` with a fresh, uniquely named schema and a pool bound to it, then closes the
    /// pool and drops the schema (also when `body` throws). Runs alongside other such tests;
    /// waits while a ``withExclusiveCluster(maxConnections:checkoutTimeout:_:)`` test runs.
    public static func withSchema<T>(
        maxConnections: Int = 4, checkoutTimeout: Duration = .seconds(10),
        _ body: (TestSchema) async throws -> T
    ) async throws -> T {
        let url = try url()
        // Already inside the gate (a nested schema): acquiring again could deadlock behind a writer.
        if ClusterGate.holdsShared || ClusterGate.holdsExclusive {
            return try await withFreshSchema(url, maxConnections, checkoutTimeout, body)
        }
        return try await ClusterGate.holding(.shared) {
            try await withFreshSchema(url, maxConnections, checkoutTimeout, body)
        }
    }

    /// Like ``withSchema(maxConnections:checkoutTimeout:_:)`` but with the cluster to itself: no
    /// other database test runs meanwhile, so `body` may call ``restartCluster(mode:)``.
    public static func withExclusiveCluster<T>(
        maxConnections: Int = 4, checkoutTimeout: Duration = .seconds(10),
        _ body: (TestSchema) async throws -> T
    ) async throws -> T {
        let url = try url()
        return try await ClusterGate.holding(.exclusive) {
            try await withFreshSchema(url, maxConnections, checkoutTimeout, body)
        }
    }

    private static func withFreshSchema<T>(
        _ url: String, _ maxConnections: Int, _ checkoutTimeout: Duration,
        _ body: (TestSchema) async throws -> T
    ) async throws -> T {
        let logger = logger()
        let name = "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let admin = try PostgresConfiguration(url: url, applicationName: "compass-tests")
        var configuration = admin
        // The name is generated above (hex digits only): safe in an option string.
        configuration["options"] = [admin["options"], "-c search_path=\(name),public"]
            .compactMap { $0 }.joined(separator: " ")
        let setup = try await PostgresConnection.connect(configuration: admin, logger: logger)
        try await setup.run { connection in try connection.executeScript("CREATE SCHEMA \(name)") }
        await setup.close()
        let pool = PostgresPool(
            configuration: configuration, maxConnections: maxConnections,
            checkoutTimeout: checkoutTimeout, logger: logger)
        let schema = TestSchema(name: name, pool: pool, configuration: configuration, logger: logger)
        let result: Result<T, any Error>
        do { result = .success(try await body(schema)) } catch { result = .failure(error) }
        await pool.close()
        do {
            let cleanup = try await PostgresConnection.connect(configuration: admin, logger: logger)
            try await cleanup.run { connection in
                try connection.executeScript("DROP SCHEMA IF EXISTS \(name) CASCADE")
            }
            await cleanup.close()
        } catch {
            logger.warning("could not drop test schema", metadata: ["schema": "\(name)", "error": "\(error)"])
        }
        return try result.get()
    }
}
