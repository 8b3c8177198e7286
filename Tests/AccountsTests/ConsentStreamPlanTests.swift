import Foundation
import Postgres
import TestSupport
import Testing

@testable import AccountsService

/// How PostgreSQL runs a page of the consent stream, its summary, its pruning and the backlog's
/// count: by the (xid, id) index, whatever the table's statistics say (migrations 0200, 0210). A page
/// once sorted the whole stream (its ORDER BY named the output column `xid`, a bigint); then, with
/// the statistics of a drained queue (autovacuum saw it empty), the planner chose a sequential scan
/// and a sort: 15 µs an act under `compass load` with a 100,000-act backlog, and a catch-up after
/// an Audit outage slowing as the square of the backlog.
@Suite(.serialized) struct ConsentStreamPlanTests {
    @Test func aPageReadsOnlyItsOwnRowsWhateverTheStatisticsSay() async throws {
        try await AccountsHarness.run(extra: ConsentStreamTests.quick) { harness in
            await harness.stop("Audit")
            let pool = harness.database.pool
            // The statistics of a drained stream (a heap of dead rows, ten live ones at its end, the
            // planner's density near zero), then a backlog of 20,000 acts they do not know of.
            let deletion = try await pool.withConnection { db in
                try db.execute("DELETE FROM accounts.consent_outbox")
                try Self.insertActs(20_000, named: "drained", on: db)
                try Self.insertActs(10, named: "tail", on: db)
                try db.execute("BEGIN")
                try db.execute("DELETE FROM accounts.consent_outbox WHERE idempotency_key LIKE 'drained-%'")
                let deletion = try db.query("SELECT pg_current_xact_id()::text::bigint")[0].decode(Int64.self, column: 0)
                try db.execute("COMMIT")
                return deletion
            }
            // VACUUM removes the deleted rows only once no transaction that could see them runs.
            try await Self.waitForHorizon(past: deletion, on: pool)
            try await pool.withConnection { db in
                try db.execute("VACUUM ANALYZE accounts.consent_outbox")
                try Self.insertActs(20_000, named: "plan", on: db)
            }
            try await Self.waitUntilEveryActIsReadable(on: pool)
            // A page, a summary and a pruning of the first 500, each measured in a transaction rolled back.
            let statements = ConsentStreamStatements(schema: "accounts")
            let (xid, id) = try await pool.withConnection { db in
                try db.query("SELECT xid::text::bigint, id FROM accounts.consent_outbox ORDER BY xid, id OFFSET 499 LIMIT 1")[0]
                    .decode(Int64.self, Int64.self)
            }
            let checks = [
                ("page", statements.page.sql, "0, 0, 500"), ("summary", statements.summary.sql, "0, 0, 600"),
                ("prune", statements.prune.sql, "0, 0, \(xid), \(id)"), ("backlog", statements.backlog.sql, "600"),
            ]
            func measured() async throws -> [String: Int] {
                var buffers: [String: Int] = [:]
                for mode in ["force_generic_plan", "force_custom_plan"] {
                    for (name, sql, arguments) in checks {
                        buffers["\(name), \(mode)"] = try await Self.buffers(of: sql, arguments: arguments, mode: mode, on: pool)
                    }
                }
                return buffers
            }
            let small = try await measured()
            // Three times as many acts after them: a scan of the table would touch four times the buffers.
            try await pool.withConnection { db in try Self.insertActs(60_000, named: "later", on: db) }
            try await Self.waitUntilEveryActIsReadable(on: pool)
            let large = try await measured()
            try await pool.withConnection { db in try db.execute("ANALYZE accounts.consent_outbox") }
            let analyzed = try await measured()
            let heapPages = try await pool.withConnection { db in
                try db.query("SELECT pg_relation_size('accounts.consent_outbox') / 8192")[0].decode(Int.self, column: 0)
            }
            // A scan of the table touches at least its heap's pages (about 1,600 here; the plain
            // statements' page and prune touched 1,633 and 2,133) and grows with it. By the index,
            // a page or summary touches a few dozen (more once the new rows' pages are not yet
            // all-visible and an index-only count reads the heap), a prune of 500 about 600, and
            // neither grows with the backlog.
            for (check, before) in small.sorted(by: { $0.key < $1.key }) {
                for (after, label) in [(large[check] ?? 0, "stale statistics"), (analyzed[check] ?? 0, "analyzed")] {
                    #expect(
                        after < heapPages && after <= before * 2 + 100,
                        "\(check), \(label): \(before) buffers at 20,000 acts, \(after) at 80,000 (\(heapPages) heap pages)")
                }
            }
            // The page is the first 500 in (transaction, id) order.
            let (entries, _, remaining) = try await AccountsStore(pool: pool).consents(after: .start, limit: 500)
            #expect(entries.count == 500 && remaining > 0)
            #expect(entries.map(\.position) == entries.map(\.position).sorted() && Set(entries.map(\.position)).count == 500)
            #expect(entries.prefix(10).allSatisfy { $0.idempotencyKey?.hasPrefix("tail-") == true })
            #expect(entries.dropFirst(10).allSatisfy { $0.idempotencyKey?.hasPrefix("plan-") == true })
        }
    }

    /// Waits until every act written so far is readable (the oldest transaction running on the
    /// cluster began after the last of them). Each measurement starts there: a transaction of
    /// another suite on the same cluster can hold the horizon back for a while, and a page then
    /// reads nothing (2 buffers) where it would read 500 acts (about 15), which made a later,
    /// settled measurement look like growth.
    static func waitUntilEveryActIsReadable(on pool: PostgresPool) async throws {
        let last = try await pool.withConnection { db in
            try db.query("SELECT coalesce(max(xid)::text::bigint, 0) FROM accounts.consent_outbox")[0].decode(Int64.self, column: 0)
        }
        try await waitForHorizon(past: last, on: pool)
    }

    /// Waits until every transaction up to `transaction` has ended, however long another suite's holds on.
    static func waitForHorizon(past transaction: Int64, on pool: PostgresPool) async throws {
        try await withTimeout(.seconds(60), "the oldest running transaction to begin after \(transaction)") {
            while true {
                let past = try await pool.withConnection { db in
                    try db.query("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint > $1", transaction)[0]
                        .decode(Bool.self, column: 0)
                }
                if past { return }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// `count` acts written as Accounts writes them, in one transaction, keyed `<name>-<n>`.
    static func insertActs(_ count: Int, named name: String, on db: isolated PostgresConnection) throws {
        try db.execute(
            """
            INSERT INTO accounts.consent_outbox
                (xid, kind, user_id, record_id, document_type, version, action, idempotency_key, recorded_ms, client_ip)
            SELECT accounts.consent_order_key(), 'consent', gen_random_uuid(), gen_random_uuid(), 'terms_of_service', 'v1',
                'accept', $1 || '-' || n, n, '198.51.100.7'
            FROM generate_series(1, $2::int) AS n
            """, name, count)
    }

    /// The shared buffers `sql` (parameters $1…) touches when run prepared with `arguments` under
    /// `plan_cache_mode = mode`, by EXPLAIN (ANALYZE, BUFFERS), in a transaction rolled back; the
    /// second of two runs, so the first's catalog look-ups do not count. What the functions' own
    /// queries touch counts in their scan node.
    static func buffers(of sql: String, arguments: String, mode: String, on pool: PostgresPool) async throws -> Int {
        try await pool.withConnection { db in
            try db.execute("BEGIN")
            defer { _ = try? db.execute("ROLLBACK") }
            try db.execute("SET LOCAL plan_cache_mode = \(mode)")
            let types = sql.contains("$4") ? "bigint, bigint, bigint, bigint" : sql.contains("$3") ? "bigint, bigint, int" : "int"
            try db.execute("PREPARE plan_check(\(types)) AS \(sql)")
            defer { _ = try? db.execute("DEALLOCATE plan_check") }
            try db.execute("SAVEPOINT first")
            _ = try db.query("EXPLAIN (ANALYZE) EXECUTE plan_check(\(arguments))")
            try db.execute("ROLLBACK TO SAVEPOINT first")
            let lines = try db.query("EXPLAIN (ANALYZE, BUFFERS, COSTS off) EXECUTE plan_check(\(arguments))").map {
                try $0.decode(String.self)
            }
            guard let line = lines.first(where: { $0.contains("Buffers:") }) else { return 0 }
            // "Buffers: shared hit=12 read=3 dirtied=1": hits and reads.
            return ["hit", "read"].compactMap { key in
                line.range(of: "\(key)=").flatMap { range in Int(line[range.upperBound...].prefix { $0.isNumber }) }
            }.reduce(0, +)
        }
    }
}
