import Foundation
import LoadKit
import Postgres

/// Interleaved rounds of the baseline and the bus phases, so a noisy machine disturbs both alike,
/// then the median of each and an open-loop run at half the median peak.
struct BenchRounds {
    let load: LoadGenerator
    let phase: Duration
    let url: String
    let withPgbench: Bool

    struct Report {
        var median64: Double
        var median512: Double
    }

    func run(rounds: Int) async throws -> Report {
        var (at64, at512, baselines): ([PhaseResult], [PhaseResult], [Double]) = ([], [], [])
        print("")
        print("| round | phase | acknowledged/s | failed | p50 ms | p99 ms | p99.9 ms |")
        print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
        for round in 1...max(1, rounds) {
            if withPgbench {
                let tps = try await PgbenchBaseline.run(url: url, clients: 32, seconds: Int(phase.components.seconds))
                baselines.append(tps)
                print(String(format: "| %d | pgbench, 1 INSERT per commit, 32 clients | %.0f | | | | |", round, tps))
            }
            for (inFlight, label) in [(64, "64 in flight"), (512, "512 in flight")] {
                let result = await load.closedLoop(inFlight: inFlight, for: phase, label: label)
                print(row(round, result))
                if inFlight == 64 { at64.append(result) } else { at512.append(result) }
            }
        }
        let (median64, median512) = (median(at64.map(\.rate)), median(at512.map(\.rate)))
        let peak = max(median64, median512)
        let half = await load.openLoop(rate: peak / 2, for: phase, label: "open loop at half the median peak")
        print(row(nil, half))
        print("")
        print(
            String(
                format: "median over %d rounds: 64 in flight %.0f/s (p99 %.2f ms), 512 in flight %.0f/s (p99 %.2f ms)",
                at64.count, median64, median(at64.map { $0.milliseconds(99) }), median512, median(at512.map { $0.milliseconds(99) })))
        if !baselines.isEmpty {
            let baseline = median(baselines)
            print(String(format: "ratio: peak %.0f/s over the bus = %.2f× pgbench's median %.0f/s (goal ≥ 5×)", peak, peak / baseline, baseline))
        }
        print(String(format: "p99 at half the peak rate (%.0f/s): %.2f ms (goal ≤ 10 ms)", peak / 2, half.milliseconds(99)))
        return Report(median64: median64, median512: median512)
    }

    private func row(_ round: Int?, _ result: PhaseResult) -> String {
        String(
            format: "| %@ | %@ | %.0f | %d | %.2f | %.2f | %.2f |", round.map(String.init) ?? "", result.label, result.rate,
            result.failed, result.milliseconds(50), result.milliseconds(99), result.milliseconds(99.9))
    }
}

/// Does throughput hold as the table grows? Inserts rows like real ones (random subjects and
/// keys, on a chain of their own, so every index grows as it would) and measures 512 in flight again.
struct TableGrowth {
    let pool: PostgresPool

    func measure(rows: Int, load: LoadGenerator, phase: Duration) async throws -> PhaseResult {
        let started = ContinuousClock.now
        try await pool.withConnection { db in
            _ = try db.execute(
                """
                INSERT INTO audit.records (chain, position, record_id, subject, document_type, version, digest, action,
                    recorded_ms, client_ip, user_agent, ip_hmac, ua_hmac, idempotency_hash, prev_hash, hash)
                SELECT 999, n, gen_random_uuid(), gen_random_uuid(), 'terms_of_service', '1.0', 'd', 'accept',
                    (extract(epoch FROM now()) * 1000)::bigint, '203.0.113.7', 'preload', sha256('ip'::bytea),
                    sha256('ua'::bytea), gen_random_uuid()::text, sha256('p'::bytea), sha256(n::text::bytea)
                FROM generate_series(1, $1::bigint) AS n
                """, rows)
            try db.executeScript("VACUUM ANALYZE audit.records")
        }
        print(String(format: "preloaded %d rows in %.0f s", rows, (ContinuousClock.now - started).inSeconds))
        let result = await load.closedLoop(inFlight: 512, for: phase, label: "512 in flight, +\(rows) rows")
        print(
            String(
                format: "| | %@ | %.0f | %d | %.2f | %.2f | %.2f |", result.label, result.rate, result.failed,
                result.milliseconds(50), result.milliseconds(99), result.milliseconds(99.9)))
        return result
    }
}
