import Foundation
import LoadKit

/// pgbench's one-INSERT-per-commit rate into `audit.records` of the same database: what a service
/// that does one INSERT and one commit per request (a PostgREST-style API) can reach at best.
enum PgbenchBaseline {
    static let script = """
        \\set chain 1000 + :client_id
        INSERT INTO audit.records (chain, position, record_id, subject, document_type, version, digest, action,
            recorded_ms, client_ip, user_agent, ip_hmac, ua_hmac, idempotency_hash, prev_hash, hash)
        VALUES (:chain, nextval('public.bench_positions'), gen_random_uuid(), gen_random_uuid(), 'terms_of_service', '1.0',
            encode(sha256('terms'::bytea), 'hex'), 'accept', (extract(epoch FROM now()) * 1000)::bigint,
            '203.0.113.7', 'pgbench', sha256('ip'::bytea), sha256('ua'::bytea), gen_random_uuid()::text,
            sha256('previous'::bytea), sha256(random()::text::bytea));

        """

    /// Runs pgbench with `clients` connections for `seconds` and returns its tps.
    static func run(url: String, clients: Int, seconds: Int) async throws -> Double {
        try await Pgbench.run(url: url, script: script, clients: clients, seconds: seconds)
    }
}
