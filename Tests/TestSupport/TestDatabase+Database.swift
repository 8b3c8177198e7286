import Foundation
import Postgres
import ServiceKit

/// One test's private database: for tests of service code and executables that use their fixed
/// schema names (`audit`, `legal`), which a per-test schema cannot isolate.
public struct TestDatabaseInstance: Sendable {
    public let name: String
    /// `DATABASE_URL` for a child process.
    public let url: String
    /// A pool on it (no `search_path` change: the service's qualified names apply), as the admin.
    public let pool: PostgresPool

    /// The database variables of a service that uses `schema`, as a deployment sets them: its
    /// runtime role's `DATABASE_URL` and its owner's `DATABASE_MIGRATION_URL`. The roles
    /// (`<database>_<schema>` and `<database>_<schema>_owner`) are made on first use with new
    /// passwords, which the local cluster checks (`deploy/pg` trusts only the admin), and dropped
    /// with the database. A service's schema (`audit`, …) gets what `compass db roles` gives it
    /// (``ServiceName/provisionDatabaseRoles(ownerPassword:runtimePassword:on:)``); any other
    /// schema the plain ``ServiceRoles``. `password`, when given, is both roles' (for tests that
    /// look for it in logs). Call it once per schema: a second call sets new passwords.
    public func serviceEnvironment(_ schema: String, password: String? = nil) async throws -> [String: String] {
        let owner = password ?? ServiceRoles.generatePassword()
        let runtime = password ?? ServiceRoles.generatePassword()
        let roles = try await pool.withConnection { db in
            if let service = ServiceName(rawValue: schema) {
                return try service.provisionDatabaseRoles(ownerPassword: owner, runtimePassword: runtime, on: db)
            }
            let roles = try ServiceRoles(schema: schema, prefix: name)
            try roles.provision(ownerPassword: owner, runtimePassword: runtime, on: db)
            return roles
        }
        guard let runtimeURL = ServiceRoles.url(url, user: roles.runtime, password: runtime),
            let ownerURL = ServiceRoles.url(url, user: roles.owner, password: owner)
        else { throw TestSupportError("DATABASE_URL is not a URL") }
        return ["DATABASE_URL": runtimeURL, "DATABASE_MIGRATION_URL": ownerURL]
    }

    /// A pool connected as `schema`'s runtime role (after ``serviceEnvironment(_:)``): what the
    /// service itself may do.
    public func runtimePool(_ environment: [String: String], maxConnections: Int = 2) throws -> PostgresPool {
        guard let url = environment["DATABASE_URL"] else { throw TestSupportError("no DATABASE_URL in the service's environment") }
        return PostgresPool(
            configuration: try PostgresConfiguration(url: url, applicationName: "compass-tests"), maxConnections: maxConnections,
            checkoutTimeout: .seconds(10), logger: TestDatabase.logger())
    }
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
                try await admin.pool.withConnection { db in
                    try db.executeScript("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
                    // The database's service roles (its name is their prefix): nothing of theirs is
                    // left once it is gone. The name is hex digits and '_': safe in LIKE and DDL.
                    let roles = try db.query("SELECT rolname::text FROM pg_roles WHERE rolname LIKE $1", "\(name)\\_%")
                        .map { try $0.decode(String.self, column: 0) }
                    for role in roles where ServiceRoles.isPlainIdentifier(role) { try db.executeScript("DROP ROLE IF EXISTS \(role)") }
                }
            } catch {
                admin.logger.warning("could not drop test database", metadata: ["database": "\(name)", "error": "\(error)"])
            }
            return try result.get()
        }
    }
}
