import Crypto
import Foundation
import Hex
import Postgres
import TestSupport
import Testing

@Suite("Migrations")
struct MigrationTests {
    /// Writes `files` (name → SQL) into a fresh temporary directory.
    static func directory(_ files: [String: String]) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, sql) in files { try sql.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        return url
    }

    static let files = [
        "0001_create_documents.sql": """
        CREATE TABLE documents (id bigserial PRIMARY KEY, title text NOT NULL);
        CREATE TABLE applied_log (file text NOT NULL);
        INSERT INTO applied_log VALUES ('0001');
        SELECT pg_sleep(0.3);
        """,
        "0002_add_owner.sql": """
        ALTER TABLE documents ADD COLUMN owner uuid;
        INSERT INTO applied_log VALUES ('0002');
        """,
        "0010_index.sql": "CREATE INDEX documents_owner ON documents (owner); INSERT INTO applied_log VALUES ('0010');",
        "README.md": "not a migration",
        "notes.sql": "not numbered, ignored",
    ]

    @Test("files load in numeric order with SHA-256 checksums; duplicates are refused")
    func loading() throws {
        let migrations = try Migration.load(directory: Self.directory(Self.files))
        #expect(migrations.map(\.name) == ["0001_create_documents", "0002_add_owner", "0010_index"])
        #expect(migrations.map(\.version) == [1, 2, 10])
        #expect(migrations[1].checksum == Hex.string(SHA256.hash(data: Array(Self.files["0002_add_owner.sql"]!.utf8))))
        let duplicate = try Self.directory(["0001_a.sql": "SELECT 1", "001_b.sql": "SELECT 2"])
        #expect(throws: MigrationError.duplicateVersion("0001_a", "001_b")) { try Migration.load(directory: duplicate) }
    }

    @Test("applied once, recorded with checksums, new files applied later, changed files refused")
    func appliedOnce() async throws {
        try await TestDatabase.withSchema { db in
            let schema = db.name
            let directory = try Self.directory(Self.files)
            let migrator = Migrator(schema: schema, migrations: try Migration.load(directory: directory), logger: db.logger)
            #expect(try await migrator.run(on: db.pool) == ["0001_create_documents", "0002_add_owner", "0010_index"])
            #expect(try await migrator.run(on: db.pool) == [])
            let (log, records) = try await db.pool.withConnection { c in
                (
                    try c.query("SELECT file FROM applied_log ORDER BY file").map { try $0.decode(String.self, column: 0) },
                    try c.query("SELECT name, checksum FROM schema_migrations ORDER BY version").map { try $0.decode(String.self, String.self) }
                )
            }
            #expect(log == ["0001", "0002", "0010"])
            #expect(records.map(\.0) == migrator.migrations.map(\.name))
            #expect(records.map(\.1) == migrator.migrations.map(\.checksum))

            // A new file is applied alone.
            try "INSERT INTO applied_log VALUES ('0011');".write(
                to: directory.appendingPathComponent("0011_more.sql"), atomically: true, encoding: .utf8)
            let more = Migrator(schema: schema, migrations: try Migration.load(directory: directory), logger: db.logger)
            #expect(try await more.run(on: db.pool) == ["0011_more"])

            // Editing an applied file is refused before anything runs.
            try "INSERT INTO applied_log VALUES ('0002-edited');".write(
                to: directory.appendingPathComponent("0002_add_owner.sql"), atomically: true, encoding: .utf8)
            try "INSERT INTO applied_log VALUES ('0012');".write(
                to: directory.appendingPathComponent("0012_after_edit.sql"), atomically: true, encoding: .utf8)
            let edited = Migrator(schema: schema, migrations: try Migration.load(directory: directory), logger: db.logger)
            await #expect {
                try await edited.run(on: db.pool)
            } throws: { error in
                guard case MigrationError.checksumMismatch(let name, _, _) = error else { return false }
                return name == "0002_add_owner"
            }
            let count = try await db.pool.withConnection { c in try c.query("SELECT count(*) FROM applied_log")[0].decode(Int.self, column: 0) }
            #expect(count == 4)
        }
    }

    @Test("a file whose earlier text is listed as superseded is up to date; any other edit is still refused")
    func supersededChecksums() async throws {
        try await TestDatabase.withSchema { db in
            let original = "-- Notes (first wording).\nCREATE TABLE notes (id int);\n"
            let directory = try Self.directory(["0001_notes.sql": original])
            let first = Migrator(schema: db.name, migrations: try Migration.load(directory: directory), logger: db.logger)
            #expect(try await first.run(on: db.pool) == ["0001_notes"])
            let applied = first.migrations[0].checksum

            // Reworded comment, the old text's checksum listed: nothing runs again, nothing is refused.
            try "-- Notes.\nCREATE TABLE notes (id int);\n".write(
                to: directory.appendingPathComponent("0001_notes.sql"), atomically: true, encoding: .utf8)
            try "# the first wording\n\(applied)  # kept\n\n".write(
                to: directory.appendingPathComponent("0001_notes.superseded"), atomically: true, encoding: .utf8)
            let reworded = Migrator(schema: db.name, migrations: try Migration.load(directory: directory), logger: db.logger)
            #expect(reworded.migrations[0].supersededChecksums == [applied])
            #expect(reworded.migrations[0].checksum != applied)
            #expect(try await db.pool.withConnection { c in try reworded.pending(on: c) } == [])
            #expect(try await reworded.run(on: db.pool) == [])
            let recorded = try await db.pool.withConnection { c in
                try c.query("SELECT checksum FROM schema_migrations WHERE version = 1")[0].decode(String.self, column: 0)
            }
            #expect(recorded == applied)

            // A database first migrated with the reworded text records the first text's checksum, so a
            // release that knows only the first text (and no `.superseded` list) starts on it.
            try await TestDatabase.withSchema { fresh in
                let newer = Migrator(schema: fresh.name, migrations: try Migration.load(directory: directory), logger: fresh.logger)
                #expect(try await newer.run(on: fresh.pool) == ["0001_notes"])
                let recordedFresh = try await fresh.pool.withConnection { c in
                    try c.query("SELECT checksum FROM schema_migrations WHERE version = 1")[0].decode(String.self, column: 0)
                }
                #expect(recordedFresh == applied)
                let older = Migrator(
                    schema: fresh.name, migrations: [Migration(version: 1, name: "0001_notes", sql: original)], logger: fresh.logger)
                #expect(try await older.run(on: fresh.pool) == [])
            }

            // The same file without its list is an edit of an applied migration.
            try FileManager.default.removeItem(at: directory.appendingPathComponent("0001_notes.superseded"))
            let unlisted = Migrator(schema: db.name, migrations: try Migration.load(directory: directory), logger: db.logger)
            await #expect(throws: MigrationError.checksumMismatch(name: "0001_notes", applied: applied, file: unlisted.migrations[0].checksum)) {
                try await unlisted.run(on: db.pool)
            }

            // A list line that is not a SHA-256 is refused at load, naming the file and the line.
            try "5038b10c\n".write(to: directory.appendingPathComponent("0001_notes.superseded"), atomically: true, encoding: .utf8)
            #expect(throws: MigrationError.invalidSupersededChecksum(name: "0001_notes", line: "5038b10c")) {
                try Migration.load(directory: directory)
            }
        }
    }

    /// The shipped Documents migration whose header was reworded lists the checksum every
    /// deployment recorded for it (`sha256sum` of the file as it shipped, before the rewording),
    /// so an upgrade does not refuse to start.
    @Test func theRewordedDocumentStorageMigrationListsItsFirstText() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Services/Documents/Service/Migrations")
        let storage = try #require(try Migration.load(directory: directory).first { $0.version == 180 })
        #expect(storage.supersededChecksums == ["5038b10c97172832c9046d0587f6abe27cc5fc9983082af092ced90eddf8b1c0"])
        #expect(storage.matches(applied: "5038b10c97172832c9046d0587f6abe27cc5fc9983082af092ced90eddf8b1c0"))
        #expect(!storage.supersededChecksums.contains(storage.checksum))
    }

    @Test("a failing migration leaves no record and no partial changes")
    func failingMigration() async throws {
        try await TestDatabase.withSchema { db in
            let migrations = [
                Migration(version: 1, name: "0001_ok", sql: "CREATE TABLE ok (v int);"),
                Migration(version: 2, name: "0002_bad", sql: "CREATE TABLE half (v int); SELECT * FROM missing_table;"),
            ]
            let migrator = Migrator(schema: db.name, migrations: migrations, logger: db.logger)
            let error = await #expect(throws: PostgresError.self) { try await migrator.run(on: db.pool) }
            #expect(error?.sqlState == "42P01")
            let (versions, half) = try await db.pool.withConnection { c in
                (
                    try c.query("SELECT version FROM schema_migrations").map { try $0.decode(Int.self, column: 0) },
                    try c.query("SELECT to_regclass($1) IS NOT NULL", "\(db.name).half")[0].decode(Bool.self, column: 0)
                )
            }
            #expect(versions == [1])
            #expect(half == false)
            #expect(throws: MigrationError.invalidSchemaName("Bad-Name")) {
                try Migrator(schema: "Bad-Name", migrations: [], logger: db.logger).validate()
            }
        }
    }

    @Test("two migrators starting at once on a fresh schema both succeed, each file applied exactly once")
    func concurrentMigrators() async throws {
        try await TestDatabase.withSchema { db in
            let schema = db.name + "_fresh"
            let migrations = try Migration.load(directory: Self.directory(Self.files))
            let poolA = PostgresPool(configuration: db.configuration, maxConnections: 1, logger: db.logger)
            let poolB = PostgresPool(configuration: db.configuration, maxConnections: 1, logger: db.logger)
            async let a = Migrator(schema: schema, migrations: migrations, logger: db.logger).run(on: poolA)
            async let b = Migrator(schema: schema, migrations: migrations, logger: db.logger).run(on: poolB)
            let (appliedA, appliedB) = try await (a, b)
            await poolA.close()
            await poolB.close()
            #expect((appliedA + appliedB).sorted() == migrations.map(\.name))
            #expect(appliedA.isEmpty || appliedB.isEmpty)
            let (log, records) = try await db.pool.withConnection { c in
                let log = try c.query("SELECT file FROM \(schema).applied_log ORDER BY file").map { try $0.decode(String.self, column: 0) }
                let records = try c.query("SELECT count(*) FROM \(schema).schema_migrations")[0].decode(Int.self, column: 0)
                try c.executeScript("DROP SCHEMA \(schema) CASCADE")
                return (log, records)
            }
            #expect(log == ["0001", "0002", "0010"])
            #expect(records == 3)
        }
    }
}
