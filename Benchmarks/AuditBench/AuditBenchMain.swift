import Bus
import Contracts
import Crypto
import Foundation
import Logging
import Postgres
import TestSupport

/// `audit-bench`: durable acceptance writes over the bus against the real Legal and Audit
/// executables on a fresh database of the throwaway cluster (`DATABASE_URL`; `deploy/bench-audit`
/// starts one), with pgbench's one-INSERT-per-commit rate on the same table as the baseline.
///
/// Options: `--seconds N` per phase (default 5), `--writers N` audit writers (default 4),
/// `--clients N` bus client sockets (default 2), `--skip-pgbench`, `--preload N` (insert N rows,
/// then measure 512 in flight again: does throughput hold as the table grows?), `--verbose`.
@main
struct AuditBenchMain {
    static func main() async {
        do { try await run() } catch {
            FileHandle.standardError.write(Data("audit-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func option(_ name: String, default value: Int) -> Int {
        let arguments = CommandLine.arguments
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let parsed = Int(arguments[index + 1]) else {
            return value
        }
        return parsed
    }

    static func run() async throws {
        let seconds = option("--seconds", default: 5)
        let writers = option("--writers", default: 4)
        let clientCount = option("--clients", default: 2)
        let phase = Duration.seconds(seconds)
        try await TestDatabase.withDatabase { database in
            let (legalRPC, legalEvents, auditRPC) = (ipcEndpoint(), ipcEndpoint(), ipcEndpoint())
            var common = ProcessInfo.processInfo.environment
            common["DATABASE_URL"] = database.url
            common["HEALTH_PORT"] = "0"
            common["LOG_LEVEL"] = ProcessInfo.processInfo.environment["BENCH_SERVICE_LOG_LEVEL"] ?? "warning"
            var legalEnvironment = common
            legalEnvironment["RPC_BIND"] = legalRPC
            legalEnvironment["EVENTS_BIND"] = legalEvents
            let legal = try await PeerProcess("Legal", environment: legalEnvironment)
            var auditEnvironment = common
            auditEnvironment["RPC_BIND"] = auditRPC
            auditEnvironment["EVENTS_BIND"] = ipcEndpoint()
            auditEnvironment["LEGAL_RPC_ENDPOINTS"] = legalRPC
            auditEnvironment["LEGAL_EVENTS_ENDPOINTS"] = legalEvents
            auditEnvironment["AUDIT_SIGNING_KEY"] = Curve25519.Signing.PrivateKey().rawRepresentation.base64EncodedString()
            auditEnvironment["AUDIT_WRITERS"] = String(writers)
            auditEnvironment["DATABASE_POOL_SIZE"] = String(writers + 4)
            let audit = try await PeerProcess("Audit", environment: auditEnvironment)
            defer {
                audit.signal(SIGTERM)
                legal.signal(SIGTERM)
                audit.process.waitUntilExit()
                legal.process.waitUntilExit()
            }

            var logger = Logger(label: "audit-bench")
            logger.logLevel = .error
            let legalClient = try await RPCClient.connect(to: "legal", endpoints: [legalRPC], logger: logger)
            let version = try await legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            var clients: [RPCClient] = []
            for _ in 0..<clientCount { clients.append(try await RPCClient.connect(to: "audit", endpoints: [auditRPC], logger: logger)) }
            let load = LoadGenerator(clients: clients, version: version, users: (0..<20_000).map { _ in UUID() })

            print("audit-bench: \(seconds) s per phase, \(writers) audit writers, \(clientCount) client sockets, terms \(version)")
            _ = await load.closedLoop(inFlight: 64, for: .seconds(2), label: "warm-up")

            var baseline: Double?
            if !CommandLine.arguments.contains("--skip-pgbench") {
                try await database.pool.withConnection { db in try db.executeScript("CREATE SEQUENCE public.bench_positions") }
                baseline = try await PgbenchBaseline.run(url: database.url, clients: 32, seconds: seconds)
            }
            let at64 = await load.closedLoop(inFlight: 64, for: phase, label: "64 in flight")
            let at512 = await load.closedLoop(inFlight: 512, for: phase, label: "512 in flight")
            let peak = max(at64.rate, at512.rate)
            let half = await load.openLoop(rate: peak / 2, for: phase, label: "open loop at half peak")
            var grown: PhaseResult?
            let preload = option("--preload", default: 0)
            if preload > 0 {
                // Rows like real ones (random subjects and keys) on a chain of their own, so every
                // index grows as it would, then the 512-in-flight phase again.
                let started = ContinuousClock.now
                try await database.pool.withConnection { db in
                    _ = try db.execute("""
                        INSERT INTO audit.records (chain, position, record_id, subject, document_type, version, digest, action,
                            recorded_ms, client_ip, user_agent, ip_hmac, ua_hmac, idempotency_hash, prev_hash, hash)
                        SELECT 999, n, gen_random_uuid(), gen_random_uuid(), 'terms_of_service', '1.0', 'd', 'accept',
                            (extract(epoch FROM now()) * 1000)::bigint, '203.0.113.7', 'preload', sha256('ip'::bytea),
                            sha256('ua'::bytea), gen_random_uuid()::text, sha256('p'::bytea), sha256(n::text::bytea)
                        FROM generate_series(1, $1::bigint) AS n
                        """, preload)
                    try db.executeScript("VACUUM ANALYZE audit.records")
                }
                print(String(format: "preloaded %d rows in %.0f s", preload, (ContinuousClock.now - started).inSeconds))
                grown = await load.closedLoop(inFlight: 512, for: phase, label: "512 in flight, +\(preload) rows")
            }

            print("")
            print("| phase | acknowledged/s | failed | p50 ms | p99 ms | p99.9 ms |")
            print("| --- | ---: | ---: | ---: | ---: | ---: |")
            for result in [at64, at512, half] + (grown.map { [$0] } ?? []) {
                print(String(format: "| %@ | %.0f | %d | %.2f | %.2f | %.2f |", result.label, result.rate, result.failed,
                             result.milliseconds(50), result.milliseconds(99), result.milliseconds(99.9)))
            }
            if let baseline {
                print(String(format: "| pgbench, 1 INSERT per commit, 32 clients | %.0f | | | | |", baseline))
                print("")
                print(String(format: "ratio: peak %.0f/s over the bus = %.2f× pgbench's %.0f/s (goal ≥ 5×)", peak, peak / baseline, baseline))
            }
            print(String(format: "p99 at half the peak rate (%.0f/s): %.2f ms (goal ≤ 10 ms)", peak / 2, half.milliseconds(99)))
            if let grown {
                print(String(format: "after %d more rows: %.0f/s at 512 in flight = %.2f× the empty table's", preload, grown.rate, grown.rate / at512.rate))
            }
            if CommandLine.arguments.contains("--verbose") {
                FileHandle.standardError.write(Data("--- audit output ---\n\(audit.output)\n".utf8))
            }
            for client in clients { await client.close() }
            await legalClient.close()
        }
    }
}
