import Foundation
import LoadKit

/// The `--baseline` of `compass load`: pgbench (`-M prepared`) inserting rows shaped like an
/// acceptance, one per commit, into a scratch schema of its own (`compass_load`, dropped afterwards) — never into a
/// service's schema.
enum BaselineTable {
    static let setup = """
        CREATE SCHEMA IF NOT EXISTS compass_load;
        CREATE TABLE IF NOT EXISTS compass_load.acceptances (
            id uuid PRIMARY KEY, user_id uuid NOT NULL, document_type text NOT NULL, version text NOT NULL,
            digest text NOT NULL, action text NOT NULL, recorded_at timestamptz NOT NULL,
            client_ip text, user_agent text, hash bytea NOT NULL);
        """
    static let teardown = "DROP SCHEMA IF EXISTS compass_load CASCADE"
    static let script = """
        INSERT INTO compass_load.acceptances VALUES (gen_random_uuid(), gen_random_uuid(), 'terms_of_service',
            '2025-12-12', encode(sha256('terms'::bytea), 'hex'), 'accept', now(), '203.0.113.7', 'pgbench',
            sha256(random()::text::bytea));

        """

    static func measure(url: String, seconds: Int) async throws -> Double {
        try await psql(url, setup)
        let tps: Double
        do {
            tps = try await Pgbench.run(url: url, script: script, clients: 32, seconds: seconds, prepared: true)
        } catch {
            try? await psql(url, teardown)
            throw error
        }
        try await psql(url, teardown)
        return tps
    }

    /// Fixed DDL through psql (no input reaches it), so the CLI needs no database driver.
    static func psql(_ url: String, _ sql: String) async throws {
        try await offPool { try psqlBlocking(url, sql) }
    }

    private static func psqlBlocking(_ url: String, _ sql: String) throws {
        _ = try Command.run("psql", ["-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql])
    }
}
