import Foundation
import Postgres
import TestSupport
import Testing

/// Per-service roles (``ServiceRoles``) on a real PostgreSQL: two schemas, each with an owner
/// that migrates and a runtime role, in a database of their own. What a runtime role may do in its
/// schema, and that it can neither read nor write the other schema nor change any structure, each
/// refused with SQLSTATE 42501 (insufficient privilege).
@Suite struct ServiceRolesTests {
    static let migrations = [
        Migration(
            version: 100, name: "0100_items",
            sql: """
                CREATE TABLE items (id bigserial PRIMARY KEY, body text NOT NULL);
                CREATE FUNCTION item_count() RETURNS bigint LANGUAGE sql SET search_path FROM CURRENT AS 'SELECT count(*) FROM items';
                """)
    ]

    /// A database with schemas `alpha` and `beta`, each provisioned and migrated by its owner, and
    /// a runtime pool of each.
    static func withTwoServices(
        _ body: (TestDatabaseInstance, _ alpha: PostgresPool, _ beta: PostgresPool, _ alphaEnvironment: [String: String]) async throws -> Void
    ) async throws {
        try await TestDatabase.withDatabase { database in
            let alphaEnvironment = try await database.serviceEnvironment("alpha")
            let betaEnvironment = try await database.serviceEnvironment("beta")
            for (schema, environment) in [("alpha", alphaEnvironment), ("beta", betaEnvironment)] {
                try await migrate(schema, environment, database)
            }
            let alpha = try database.runtimePool(alphaEnvironment)
            let beta = try database.runtimePool(betaEnvironment)
            let result: Result<Void, any Error>
            do { result = .success(try await body(database, alpha, beta, alphaEnvironment)) } catch { result = .failure(error) }
            await alpha.close()
            await beta.close()
            try result.get()
        }
    }

    /// What a service does at start with `DATABASE_MIGRATION_URL`: migrate as the owner, then grant.
    static func migrate(_ schema: String, _ environment: [String: String], _ database: TestDatabaseInstance) async throws {
        let owner = try await PostgresConnection.connect(
            configuration: try PostgresConfiguration(url: environment["DATABASE_MIGRATION_URL"]!), logger: TestDatabase.logger())
        let roles = try ServiceRoles(schema: schema, prefix: database.name)
        try await owner.run { connection in
            try Migrator(schema: schema, migrations: migrations, logger: connection.logger).run(on: connection)
            try connection.executeScript(roles.runtimeGrants)
        }
        await owner.close()
    }

    /// Expects `sql` run by `pool`'s role to be refused for want of privilege (42501).
    static func expectRefused(_ pool: PostgresPool, _ sql: String, sourceLocation: SourceLocation = #_sourceLocation) async {
        #expect(await PrivilegeCheck.run(pool, sql) == .refused, "\(sql)", sourceLocation: sourceLocation)
    }

    @Test func aRuntimeRoleReadsAndWritesItsOwnRowsOnly() async throws {
        try await Self.withTwoServices { database, alpha, beta, _ in
            // Its own schema: rows, sequences and functions.
            let id = try await alpha.withConnection { db in
                try db.query("INSERT INTO alpha.items (body) VALUES ($1) RETURNING id", "mine")[0].decode(Int.self, column: 0)
            }
            try await alpha.withConnection { db in
                try db.execute("UPDATE alpha.items SET body = $1 WHERE id = $2", "changed", id)
                #expect(try db.query("SELECT alpha.item_count()")[0].decode(Int.self, column: 0) == 1)
                try db.execute("DELETE FROM alpha.items WHERE id = $1", id)
            }
            try await beta.withConnection { db in try db.execute("INSERT INTO beta.items (body) VALUES ($1)", "theirs") }
            // The other schema: no read, no write, not even its functions' results.
            for sql in [
                "SELECT * FROM beta.items", "INSERT INTO beta.items (body) VALUES ('x')", "UPDATE beta.items SET body = 'x'",
                "DELETE FROM beta.items", "SELECT beta.item_count()", "SELECT * FROM beta.schema_migrations",
            ] {
                await Self.expectRefused(alpha, sql)
            }
            await Self.expectRefused(beta, "SELECT * FROM alpha.items")
            // Nothing of beta's changed.
            let rows = try await database.pool.withConnection { db in
                try db.query("SELECT body FROM beta.items").map { try $0.decode(String.self, column: 0) }
            }
            #expect(rows == ["theirs"])
        }
    }

    @Test func aRuntimeRoleCannotChangeAnyStructure() async throws {
        try await Self.withTwoServices { _, alpha, _, _ in
            for sql in [
                "CREATE TABLE alpha.extra (id int)", "ALTER TABLE alpha.items ADD COLUMN extra int", "DROP TABLE alpha.items",
                "TRUNCATE alpha.items", "CREATE INDEX ON alpha.items (body)", "CREATE TABLE public.extra (id int)",
                "CREATE SCHEMA extra", "CREATE ROLE intruder", "ALTER SCHEMA alpha RENAME TO gamma",
                "CREATE TRIGGER t BEFORE INSERT ON alpha.items FOR EACH ROW EXECUTE FUNCTION alpha.item_count()",
            ] {
                await Self.expectRefused(alpha, sql)
            }
        }
    }

    @Test func largeObjectsBelongToTheRoleThatMadeThem() async throws {
        try await Self.withTwoServices { _, alpha, beta, _ in
            let oid = try await alpha.withConnection { db in
                try db.transaction { db in
                    let oid = try db.query("SELECT lo_from_bytea(0, $1)::bigint", Data("bytes".utf8))[0].decode(Int.self, column: 0)
                    #expect(try db.query("SELECT convert_from(lo_get($1::oid), 'UTF8')", oid)[0].decode(String.self, column: 0) == "bytes")
                    return oid
                }
            }
            await Self.expectRefused(beta, "SELECT lo_get(\(oid))")
            await Self.expectRefused(beta, "SELECT lo_unlink(\(oid))")
            try await alpha.withConnection { db in _ = try db.query("SELECT lo_unlink($1::oid)", oid) }
        }
    }

    @Test func onlyTheProvisionedRolesConnectAndNoneMakesTemporaryTables() async throws {
        try await Self.withTwoServices { database, alpha, _, alphaEnvironment in
            // A login role of the same cluster that was granted nothing: with CONNECT taken from
            // PUBLIC, the server turns it away. Its name has the database's prefix, so it is dropped
            // with the database's roles; the password is hex digits, safe in DDL (no parameters).
            let stranger = "\(database.name)_stranger"
            let password = ServiceRoles.generatePassword()
            try await database.pool.withConnection { db in try db.executeScript("CREATE ROLE \(stranger) LOGIN PASSWORD '\(password)'") }
            let strangerURL = try #require(ServiceRoles.url(database.url, user: stranger, password: password))
            let strangerConfiguration = try PostgresConfiguration(url: strangerURL)
            do {
                let connection = try await PostgresConnection.connect(configuration: strangerConfiguration, logger: TestDatabase.logger())
                await connection.close()
                Issue.record("a role without CONNECT on the database connected")
            } catch let error as PostgresError {
                #expect(error.message.contains("permission denied for database"), "\(error)")
            }
            // Granted CONNECT, the same role and password get in: what refused it was the privilege.
            try await database.pool.withConnection { db in
                try db.executeScript("GRANT CONNECT ON DATABASE \(database.name) TO \(stranger)")
            }
            let admitted = try await PostgresConnection.connect(configuration: strangerConfiguration, logger: TestDatabase.logger())
            await admitted.close()
            // Neither the runtime role nor the owner may make temporary tables.
            await Self.expectRefused(alpha, "CREATE TEMP TABLE scratch (id int)")
            let owner = try database.runtimePool(["DATABASE_URL": try #require(alphaEnvironment["DATABASE_MIGRATION_URL"])])
            await Self.expectRefused(owner, "CREATE TEMP TABLE scratch (id int)")
            await owner.close()
        }
    }

    @Test func appendOnlyTablesTakeRowsButNeverChangeThem() async throws {
        try await TestDatabase.withDatabase { database in
            let roles = try ServiceRoles(schema: "delta", prefix: database.name, appendOnlyTables: ["items", "not_made_yet"])
            let environment = try await database.serviceEnvironment("delta")
            // What a service does at start with an owner: migrate, then apply its grants.
            let owner = try await PostgresConnection.connect(
                configuration: try PostgresConfiguration(url: environment["DATABASE_MIGRATION_URL"]!), logger: TestDatabase.logger())
            try await owner.run { connection in
                try Migrator(schema: "delta", migrations: Self.migrations, logger: connection.logger).run(on: connection)
                try connection.executeScript(roles.runtimeGrants)
            }
            await owner.close()
            let pool = try database.runtimePool(environment)
            let id = try await pool.withConnection { db in
                try db.query("INSERT INTO delta.items (body) VALUES ($1) RETURNING id", "kept")[0].decode(Int.self, column: 0)
            }
            for sql in ["UPDATE delta.items SET body = 'changed'", "DELETE FROM delta.items", "TRUNCATE delta.items"] {
                await Self.expectRefused(pool, sql)
            }
            let body = try await pool.withConnection { db in
                try db.query("SELECT body FROM delta.items WHERE id = $1", id)[0].decode(String.self, column: 0)
            }
            #expect(body == "kept")
            // The schema's other tables keep UPDATE and DELETE (schema_migrations, written by the owner only, stands in).
            try await pool.withConnection { db in try db.execute("UPDATE delta.schema_migrations SET name = name WHERE false") }
            await pool.close()
        }
    }

    @Test func theRuntimeRoleStartsWithoutDDLWhenNothingIsPendingAndIsRefusedOtherwise() async throws {
        try await Self.withTwoServices { _, alpha, _, _ in
            let current = Migrator(schema: "alpha", migrations: Self.migrations, logger: TestDatabase.logger())
            let applied = try await current.run(on: alpha)
            #expect(applied.isEmpty)
            let newer = Migrator(
                schema: "alpha", migrations: Self.migrations + [Migration(version: 101, name: "0101_more", sql: "CREATE TABLE more (id int)")],
                logger: TestDatabase.logger())
            let pending = try await alpha.withConnection { db in try newer.pending(on: db) }
            #expect(pending == ["0101_more"])
            await #expect(throws: PostgresError.self) { try await newer.run(on: alpha) }
        }
    }

    @Test func passwordsAreCheckedAndProvisioningIsRepeatableAndTakesOverOldObjects() async throws {
        try await TestDatabase.withDatabase { database in
            // A schema first run in single-URL mode: everything owned by the admin.
            try await database.pool.withConnection { db in
                try db.executeScript("CREATE SCHEMA gamma; CREATE TABLE gamma.old (id serial PRIMARY KEY, body text)")
            }
            let first = try await database.serviceEnvironment("gamma")
            let environment = try await database.serviceEnvironment("gamma")  // again: new passwords, same roles
            let roles = try ServiceRoles(schema: "gamma", prefix: database.name)
            let owners = try await database.pool.withConnection { db in
                try db.query(
                    """
                    SELECT c.relname::text, pg_get_userbyid(c.relowner)::text FROM pg_class c
                    WHERE c.relnamespace = 'gamma'::regnamespace ORDER BY 1
                    """
                ).map { try $0.decode(String.self, String.self) }
            }
            #expect(owners.allSatisfy { $0.1 == roles.owner }, "\(owners)")
            let attributes = try await database.pool.withConnection { db in
                try db.query(
                    "SELECT count(*)::bigint, bool_or(rolsuper OR rolcreaterole OR rolcreatedb) FROM pg_roles WHERE rolname IN ($1, $2)",
                    roles.owner, roles.runtime)[0].decode(Int.self, Bool.self)
            }
            #expect(attributes.0 == 2 && !attributes.1)
            let pool = try database.runtimePool(environment)
            try await pool.withConnection { db in try db.execute("INSERT INTO gamma.old (body) VALUES ($1)", "kept") }
            await pool.close()
            // The first passwords were replaced: the server refuses them (28P01).
            do {
                let stale = try await PostgresConnection.connect(
                    configuration: try PostgresConfiguration(url: first["DATABASE_URL"]!), logger: TestDatabase.logger())
                await stale.close()
                Issue.record("a replaced password was accepted")
            } catch let error as PostgresError {
                #expect(error.message.contains("password authentication failed"), "\(error)")
            }
            #expect(throws: DatabaseRoleError.self) {
                try ServiceRoles(schema: "gamma", owner: "same", runtime: "same")
            }
            #expect(throws: DatabaseRoleError.self) { try ServiceRoles(schema: "Robert'); DROP", prefix: "x") }
            #expect(!ServiceRoles.isAcceptablePassword("short"))
            #expect(!ServiceRoles.isAcceptablePassword("has a quote ' in it, long enough"))
        }
    }
}
