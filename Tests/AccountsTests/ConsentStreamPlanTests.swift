import Foundation
import Postgres
import TestSupport
import Testing

@testable import AccountsService

/// How PostgreSQL runs a page of the consent stream: a range scan of the (xid, id) index from
/// the reader's position, with no sort, whatever the backlog. Its ORDER BY once named the output
/// column `xid` (a bigint, in no index) instead of the table's: every page was a sequential scan
/// and sort of the whole stream, 15 µs an act under `compass load` with a 100,000-row backlog,
/// and a catch-up after an Audit outage slowed as the square of the backlog.
@Suite(.serialized) struct ConsentStreamPlanTests {
    @Test func aPageIsAnIndexRangeScanInBothPlanModes() async throws {
        try await AccountsHarness.run(extra: ConsentStreamTests.quick) { harness in
            await harness.stop("Audit")
            // A backlog of 20,000 acts, as Accounts writes them, and the planner's statistics of it.
            try await harness.database.pool.withConnection { db in
                try db.execute(
                    """
                    INSERT INTO accounts.consent_outbox
                        (xid, kind, user_id, record_id, document_type, version, action, idempotency_key, recorded_ms, client_ip)
                    SELECT pg_current_xact_id(), 'consent', gen_random_uuid(), gen_random_uuid(), 'terms_of_service', 'v1',
                        'accept', 'plan-' || n, n, '198.51.100.7'
                    FROM generate_series(1, 20000) AS n
                    """)
                try db.execute("ANALYZE accounts.consent_outbox")
            }
            let page = ConsentStreamStatements(schema: "accounts").page.sql
            for mode in ["force_generic_plan", "force_custom_plan"] {
                let plan = try await harness.database.pool.withConnection { db in
                    try db.execute("SET plan_cache_mode = \(mode)")
                    try db.execute("PREPARE plan_page(bigint, bigint, int) AS \(page)")
                    defer {
                        _ = try? db.execute("DEALLOCATE plan_page")
                        _ = try? db.execute("RESET plan_cache_mode")
                    }
                    return try db.query("EXPLAIN EXECUTE plan_page(0, 0, 500)").map { try $0.decode(String.self) }
                }
                let text = plan.joined(separator: "\n")
                #expect(text.contains("consent_outbox_order"), "\(mode): the page reads the (xid, id) index\n\(text)")
                #expect(!text.contains("Seq Scan") && !text.contains("Sort"), "\(mode): no scan or sort of the stream\n\(text)")
            }
            // And it reads them in (transaction, id) order from the position, as before.
            let (entries, _, remaining) = try await AccountsStore(pool: harness.database.pool).consents(after: .start, limit: 500)
            #expect(entries.count == 500 && remaining > 0)
            #expect(entries.map(\.position) == entries.map(\.position).sorted())
            #expect(Set(entries.map(\.position)).count == 500)
        }
    }
}
