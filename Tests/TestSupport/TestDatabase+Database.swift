import Foundation
import Postgres

/// One test's private database: for tests of service code and executables that use their fixed
/// schema names (`audit`, `legal`), which a per-test schema cannot isolate.
public struct TestDatabaseInstance: Sendable {
    public let name: String
    /// `DATABASE_URL` for a child process.
    public let url: String
    /// A pool on it (no `search_path` change: the service's qualified names apply).
    public let pool: PostgresPool
}

extension TestDatabase {
    /// Creates a fresh database, runs `body`, drops the database (forcibly: a child process may
    /// still hold connections when a test fails). Holds the shared cluster gate throughout.
    public static func withDatabase<T>(
        maxConnections: Int = 8, checkoutTimeout: Duration = .seconds(10),
        _ body: (TestDatabaseInstance) async throws -> T
    ) async throws -> T {
        try await withSchema(maxConnections: 1) { admin in
            let name = "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            // The name is generated above (hex digits only): safe in DDL, which takes no parameters.
            try await admin.pool.withConnection { db in try db.executeScript("CREATE DATABASE \(name)") }
            guard var components = URLComponents(string: try url()) else {
                throw TestSupportError("DATABASE_URL is not a URL")
            }
            components.path = "/" + name
            let databaseURL = components.string!
            let pool = PostgresPool(
                configuration: try PostgresConfiguration(url: databaseURL, applicationName: "compass-tests"),
                maxConnections: maxConnections, checkoutTimeout: checkoutTimeout, logger: admin.logger)
            let result: Result<T, any Error>
            do { result = .success(try await body(TestDatabaseInstance(name: name, url: databaseURL, pool: pool))) } catch {
                result = .failure(error)
            }
            await pool.close()
            do {
                try await admin.pool.withConnection { db in try db.executeScript("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
            } catch {
                admin.logger.warning("could not drop test database", metadata: ["database": "\(name)", "error": "\(error)"])
            }
            return try result.get()
        }
    }
}
