import Logging
import Postgres
import Retry

/// How a bus service brings its schema up to date at start, in one of two modes.
///
/// - **Per-service roles** (`DATABASE_MIGRATION_URL` set): the migrations run on one connection
///   as the schema's owner, which then grants the runtime role (`DATABASE_URL`'s) the rows of this
///   schema and nothing more (``ServiceRoles/runtimeGrants``, with the service's append-only
///   tables from ``ServiceName/appendOnlyTables``). Before that, the runtime role is
///   checked: a superuser, `CREATEROLE` or `CREATEDB` role, or one that owns the schema, would make
///   the separation pointless, so the service refuses to start.
/// - **Single URL** (development): `DATABASE_URL` migrates. A least-privileged runtime role
///   without the owner's URL still starts when nothing is pending (``Migrator`` then runs no DDL),
///   which is how a serving process starts after a `DATABASE_MIGRATE_ONLY` step.
enum ServiceMigration {
    static func run<Service: ServiceDescription>(
        _ service: Service.Type, database: DatabaseSettings, pool: PostgresPool, logger: Logger
    ) async throws {
        let schema = Service.name
        let migrator = Migrator(schema: schema, migrations: OutboxSchema.migrations + (try Service.migrations()), logger: logger)
        guard let ownerConfiguration = try database.migrationConfiguration(applicationName: Service.name) else {
            try await DatabaseRetry.run(within: database.startupTimeout, logger: logger) {
                try await pool.withConnection { connection in
                    do { try migrator.run(on: connection) } catch let error as PostgresError where error.sqlState == "42501" {
                        throw MigrationRoleError.cannotMigrate(pending: (try? migrator.pending(on: connection)) ?? [])
                    }
                }
            }
            return
        }
        let runtime = try await DatabaseRetry.run(within: database.startupTimeout, logger: logger) {
            try await pool.withConnection { connection in try RuntimeRole.check(schema: schema, on: connection) }
        }
        try await DatabaseRetry.run(within: database.startupTimeout, logger: logger) {
            let owner = try await PostgresConnection.connect(configuration: ownerConfiguration, logger: logger)
            do {
                let applied = try await owner.run { connection in
                    let ownerRole = try connection.query("SELECT current_user::text")[0].decode(String.self, column: 0)
                    let roles =
                        try ServiceName(rawValue: schema)?.databaseRoles(owner: ownerRole, runtime: runtime)
                        ?? ServiceRoles(schema: schema, owner: ownerRole, runtime: runtime)
                    let applied = try migrator.run(on: connection)
                    try connection.executeScript(roles.runtimeGrants)
                    return applied
                }
                await owner.close()
                logger.info(
                    "migrations applied as the schema owner; runtime role granted this schema only",
                    metadata: ["applied": "\(applied.count)", "migrations": "\(applied.joined(separator: " "))", "runtime_role": "\(runtime)"])
            } catch {
                await owner.close()
                throw error
            }
        }
    }
}

/// The checks on `DATABASE_URL`'s role when a separate owner migrates.
enum RuntimeRole {
    /// The role's name, after refusing one that could do more than read and write rows.
    static func check(schema: String, on connection: isolated PostgresConnection) throws -> String {
        let row = try connection.query(
            """
            SELECT r.rolname::text, r.rolsuper, r.rolcreaterole, r.rolcreatedb,
                   coalesce((SELECT n.nspowner = r.oid FROM pg_namespace n WHERE n.nspname = $1), false)
            FROM pg_roles r WHERE r.rolname = current_user
            """, schema)[0]
        let (name, superuser, createRole, createDatabase, ownsSchema) = try row.decode(String.self, Bool.self, Bool.self, Bool.self, Bool.self)
        var powers: [String] = []
        if superuser { powers.append("SUPERUSER") }
        if createRole { powers.append("CREATEROLE") }
        if createDatabase { powers.append("CREATEDB") }
        if ownsSchema { powers.append("owner of schema \(schema)") }
        guard powers.isEmpty else { throw MigrationRoleError.runtimeRoleTooPowerful(role: name, powers: powers) }
        return name
    }
}

/// Why a service would not start with the roles it was given.
enum MigrationRoleError: Error, CustomStringConvertible {
    case runtimeRoleTooPowerful(role: String, powers: [String])
    case cannotMigrate(pending: [String])

    var description: String {
        switch self {
        case .runtimeRoleTooPowerful(let role, let powers):
            "DATABASE_URL connects as role \(role), which is \(powers.joined(separator: ", ")): with DATABASE_MIGRATION_URL set, "
                + "the runtime role must only read and write rows (create the roles with `compass db roles`)"
        case .cannotMigrate(let pending):
            "migrations are pending (\(pending.joined(separator: ", "))) and DATABASE_URL's role may not apply them: "
                + "set DATABASE_MIGRATION_URL to the schema owner's URL, or run the service once with DATABASE_MIGRATE_ONLY=true as the owner"
        }
    }
}
