import Bus
import Foundation
import Postgres
import ServiceKit
import TestSupport
import Testing

/// A service's database sessions carry its statement, lock and idle-in-transaction timeouts and
/// TCP keepalives from the moment they connect (connection options: nothing per query), and a
/// statement stopped by one gives its connection back to the pool, reusable, with an
/// `unavailable` the caller may retry.
@Suite struct DatabaseSessionLimitsTests {
    @Test func sessionsCarryTheLimitsAndATimedOutRequestFreesItsConnection() async throws {
        try await TestDatabase.withSchema { schema in
            let settings = try DatabaseSettings(
                environment: EnvironmentReader([
                    "DATABASE_URL": try TestDatabase.url(), "DATABASE_LOCK_TIMEOUT": "300ms", "DATABASE_STATEMENT_TIMEOUT": "700ms",
                ]))
            let configuration = try settings.configuration(applicationName: "limits-test")
            #expect(configuration["keepalives"] == "1" && configuration["keepalives_idle"] == "10")
            #expect(configuration["keepalives_interval"] == "5" && configuration["keepalives_count"] == "3")
            #expect(configuration["tcp_user_timeout"] == "10000")
            // One connection: a request stuck with it would starve every other.
            let pool = PostgresPool(configuration: configuration, maxConnections: 1, checkoutTimeout: .seconds(5), logger: testLogger())
            let shown = try await pool.withConnection { db in
                try ["statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"].map {
                    try db.query("SELECT current_setting($1)", $0)[0].decode(String.self, column: 0)
                }
            }
            #expect(shown == ["700ms", "300ms", "30s"])
            let backend = try await pool.withConnection { db in try db.query("SELECT pg_backend_pid()")[0].decode(Int32.self, column: 0) }

            let table = "\(schema.name).locked"
            try await schema.pool.withConnection { db in try db.executeScript("CREATE TABLE \(table) (id int)") }
            let holder = try await PostgresConnection.connect(configuration: schema.configuration, logger: testLogger())
            try await holder.run { db in try db.executeScript("BEGIN; LOCK TABLE \(table) IN ACCESS EXCLUSIVE MODE") }
            // The lock is held to the end, so only the lock timeout can end the wait (55P03).
            let locked = await #expect(throws: PostgresError.self) {
                try await pool.withTransaction { db in _ = try db.query("SELECT count(*) FROM \(table)") }
            }
            #expect(locked?.sqlState == "55P03")
            #expect(locked?.busError.code == .unavailable && locked?.busError.details?["retryAfterSeconds"] != nil)
            // The pool's only connection is free again (rolled back, same session) while the lock is still held.
            let after = try await pool.withConnection { db in try db.query("SELECT pg_backend_pid()")[0].decode(Int32.self, column: 0) }
            #expect(after == backend)

            let slow = await #expect(throws: PostgresError.self) {
                try await pool.withConnection { db in _ = try db.query("SELECT pg_sleep(5)") }
            }
            #expect(slow?.sqlState == "57014" && slow?.busError.code == .unavailable)
            #expect(try await pool.withConnection { db in try db.query("SELECT pg_backend_pid()")[0].decode(Int32.self, column: 0) } == backend)
            try await holder.run { db in try db.executeScript("ROLLBACK") }
            await holder.close()
            #expect(try await pool.withConnection { db in try db.query("SELECT count(*)::bigint FROM \(table)")[0].decode(Int.self, column: 0) } == 0)
            await pool.close()
        }
    }
}
