import BenchSupport
import Bus
import Contracts
import Crypto
import Foundation
import LoadKit
import Logging
import Postgres
import TestSupport

/// `audit-bench`: durable acceptance writes over the bus against the real Legal and Audit
/// executables on a fresh database of the throwaway cluster (`DATABASE_URL`; `deploy/bench-audit`
/// starts one), with pgbench's one-INSERT-per-commit rate on the same table as the baseline.
///
/// Each round runs pgbench, then 64 and then 512 in flight; medians over `--rounds` (default 3)
/// are reported, then an open-loop run at half the median peak rate.
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

    static func option(_ name: String, default value: Int) -> Int { BenchArguments.int(name, default: value) }

    static func run() async throws {
        let seconds = option("--seconds", default: 5)
        let writers = option("--writers", default: 4)
        let clientCount = option("--clients", default: 2)
        let phase = Duration.seconds(seconds)
        try await TestDatabase.withDatabase { database in
            let (legalRPC, legalEvents, auditRPC) = (ipcEndpoint(), ipcEndpoint(), ipcEndpoint())
            let logLevel = ProcessInfo.processInfo.environment["BENCH_SERVICE_LOG_LEVEL"] ?? "warning"
            let legal = try await PeerProcess(
                "Legal",
                environment: ServiceEnvironment.make(
                    databaseURL: database.url, rpc: legalRPC, events: legalEvents, logLevel: logLevel))
            var auditEnvironment = ServiceEnvironment.audit(
                databaseURL: database.url, rpc: auditRPC, legalRPC: legalRPC, legalEvents: legalEvents,
                signingKey: Curve25519.Signing.PrivateKey().rawRepresentation.base64EncodedString(), logLevel: logLevel)
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

            let rounds = option("--rounds", default: 3)
            let withPgbench = !CommandLine.arguments.contains("--skip-pgbench")
            if withPgbench {
                try await database.pool.withConnection { db in try db.executeScript("CREATE SEQUENCE public.bench_positions") }
            }
            let report = try await BenchRounds(load: load, phase: phase, url: database.url, withPgbench: withPgbench)
                .run(rounds: rounds)
            let preload = option("--preload", default: 0)
            if preload > 0 {
                let grown = try await TableGrowth(pool: database.pool).measure(rows: preload, load: load, phase: phase)
                print(
                    String(
                        format: "after %d more rows: %.0f/s at 512 in flight = %.2f× the median on the smaller table",
                        preload, grown.rate, grown.rate / report.median512))
            }
            if CommandLine.arguments.contains("--verbose") {
                FileHandle.standardError.write(Data("--- audit output ---\n\(audit.output)\n".utf8))
            }
            for client in clients { await client.close() }
            await legalClient.close()
        }
    }
}
