import Logging

/// Applies a service's migrations to its schema, once each, safely from several instances.
///
/// - Holds a session advisory lock keyed by the schema (`pg_advisory_lock(hashtextextended(…))`)
///   while it works, so two instances starting together apply each file exactly once: the
///   second waits, then finds everything applied.
/// - Records each file in `<schema>.schema_migrations` (version, name, SHA-256, time), in the same
///   transaction as the file's SQL: a failing file leaves no trace and no record.
/// - Refuses to start (``MigrationError/checksumMismatch(name:applied:file:)``) when an applied
///   file changed, unless the checksum applied is one the file lists as superseded (a reworded
///   comment: ``Migration/supersededChecksums``). A file applied now records its first text's
///   checksum (``Migration/recordedChecksum``), so the releases before a rewording start on it.
///   Applied versions unknown to this build (a newer release ran) are logged and left alone, so
///   an older instance can still start during a rolling deploy.
/// - Runs each file with `search_path` set to the schema, so files create unqualified objects in it.
public struct Migrator: Sendable {
    public let schema: String
    public let migrations: [Migration]
    let logger: Logger

    public init(schema: String, migrations: [Migration], logger: Logger) {
        self.schema = schema
        self.migrations = migrations.sorted { $0.version < $1.version }
        self.logger = logger
    }

    /// Checks that ``schema`` is a plain lowercase identifier (`[a-z_][a-z0-9_]*`, at most 63
    /// bytes): it is spliced into DDL, which cannot take parameters.
    public func validate() throws {
        let scalars = schema.unicodeScalars
        guard let first = scalars.first, first == "_" || ("a"..."z").contains(first), scalars.count <= 63,
            scalars.allSatisfy({ $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) })
        else { throw MigrationError.invalidSchemaName(schema) }
    }

    /// Applies the pending migrations; returns the names of those this call applied.
    @discardableResult
    public func run(on pool: PostgresPool) async throws -> [String] {
        let migrator = self
        return try await pool.withConnection { connection in try migrator.run(on: connection) }
    }

    /// Same, on a connection the caller holds (outside a transaction).
    @discardableResult
    public func run(on connection: isolated PostgresConnection) throws -> [String] {
        try validate()
        // Nothing to apply: done without DDL, locks or session changes, so a runtime role that
        // may not create anything (see ``ServiceRoles``) starts when its owner has migrated.
        if try pending(on: connection).isEmpty { return [] }
        let lockKey = "compass.migrations.\(schema)"
        // A service's statement and lock timeouts (connection options) are for requests: a
        // migration may build an index for minutes, and another instance waits here for the lock
        // while the first migrates. RESET gives the connection its own defaults back after.
        try connection.executeScript("SET statement_timeout = 0; SET lock_timeout = 0")
        try connection.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", lockKey)
        defer {
            try? connection.executeScript("RESET statement_timeout; RESET lock_timeout")
            do {
                try connection.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", lockKey)
            } catch {
                // The lock is per session: closing the connection releases it anyway.
                logger.debug("migrations: advisory unlock failed", metadata: ["error": "\(error)"])
            }
        }
        // Created only when missing: even `IF NOT EXISTS` needs `CREATE` on the database, which an
        // owner role given its schema by ``ServiceRoles/provision`` does not have.
        if try connection.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", schema).count == 0 {
            try connection.executeScript("CREATE SCHEMA \(schema)")
        }
        // The schema name is validated above ([a-z_][a-z0-9_]*): DDL cannot take parameters.
        try connection.executeScript(
            """
            CREATE TABLE IF NOT EXISTS \(schema).schema_migrations (
                version integer PRIMARY KEY,
                name text NOT NULL,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            );
            """)
        var applied: [Int: (name: String, checksum: String)] = [:]
        for row in try connection.query("SELECT version, name, checksum FROM \(schema).schema_migrations") {
            let (version, name, checksum) = try row.decode(Int.self, String.self, String.self)
            applied[version] = (name, checksum)
        }
        for migration in migrations {
            guard let record = applied[migration.version] else { continue }
            guard migration.matches(applied: record.checksum) else {
                throw MigrationError.checksumMismatch(
                    name: migration.name, applied: record.checksum, file: migration.checksum)
            }
        }
        let known = Set(migrations.map(\.version))
        for (version, record) in applied where !known.contains(version) {
            logger.warning(
                "migrations: applied migration not in this build",
                metadata: [
                    "schema": "\(schema)", "migration": "\(record.name)",
                ])
        }
        var done: [String] = []
        for migration in migrations where applied[migration.version] == nil {
            logger.debug("migrations: applying", metadata: ["schema": "\(schema)", "migration": "\(migration.name)"])
            try connection.transaction { connection in
                try connection.query("SELECT set_config('search_path', $1, true)", "\(schema), public")
                // The one place SQL runs without parameters: migration files are trusted,
                // static files shipped with the service, and may hold several statements.
                try connection.executeScript(migration.sql)
                try connection.query(
                    "INSERT INTO \(schema).schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                    migration.version, migration.name, migration.recordedChecksum)
            }
            done.append(migration.name)
        }
        return done
    }

    /// The names of the migrations not applied yet, read without changing anything; throws
    /// ``MigrationError/checksumMismatch(name:applied:file:)`` as ``run(on:)`` would.
    public func pending(on connection: isolated PostgresConnection) throws -> [String] {
        try validate()
        let table = try connection.query("SELECT to_regclass($1)::text", "\(schema).schema_migrations")[0]
            .decode(String?.self, column: 0)
        guard table != nil else { return migrations.map(\.name) }
        var applied: [Int: String] = [:]
        for row in try connection.query("SELECT version, checksum FROM \(schema).schema_migrations") {
            let (version, checksum) = try row.decode(Int.self, String.self)
            applied[version] = checksum
        }
        var pending: [String] = []
        for migration in migrations {
            guard let checksum = applied[migration.version] else {
                pending.append(migration.name)
                continue
            }
            guard migration.matches(applied: checksum) else {
                throw MigrationError.checksumMismatch(name: migration.name, applied: checksum, file: migration.checksum)
            }
        }
        return pending
    }
}
