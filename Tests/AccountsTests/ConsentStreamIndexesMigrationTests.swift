import AccountsService
import Foundation
import Postgres
import ServiceKit
import TestSupport
import Testing

/// Accounts migration 0190 on a database with acts waiting in the stream and keys kept: both stay
/// as they were, the stream's primary key on `id` and the keys' age index are gone, and new rows
/// still take their ids from the sequence.
@Suite struct ConsentStreamIndexesMigrationTests {
    @Test func waitingActsAndKeptKeysStayThroughTheUpgrade() async throws {
        try await TestDatabase.withSchema { db in
            let all = OutboxSchema.migrations + (try AccountsServiceDescription.migrations())
            _ = try await Migrator(schema: db.name, migrations: all.filter { $0.version < 190 }, logger: db.logger).run(on: db.pool)
            let user = UUID()
            let insertAct = """
                INSERT INTO consent_outbox (xid, kind, user_id, record_id, document_type, version, action, idempotency_key, recorded_ms)
                VALUES (consent_order_key(), 'consent', $1, gen_random_uuid(), 'terms_of_service', 'v1', 'accept', $2, 1000)
                """
            try await db.pool.withConnection { connection in
                for key in ["k1", "k2"] { try connection.execute(insertAct, user, key) }
                try connection.execute(
                    "INSERT INTO consent_keys (user_id, key, version, recorded_ms) VALUES ($1, 'k1', 'v1', 1000), ($1, 'k2', 'v1', 2000)", user)
            }
            #expect(
                try await Migrator(schema: db.name, migrations: all, logger: db.logger).run(on: db.pool) == [
                    "0190_consent_stream_fewer_indexes"
                ])
            try await db.pool.withConnection { connection in
                try connection.execute(insertAct, user, "k3")
                let ids = try connection.query("SELECT id FROM consent_outbox ORDER BY xid, id").map { try $0.decode(Int64.self, column: 0) }
                #expect(ids == [1, 2, 3])
                #expect(try connection.query("SELECT count(*)::bigint FROM consent_keys")[0].decode(Int.self, column: 0) == 2)
                let indexes = try connection.query("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1")
                    .map { try $0.decode(String.self, column: 0) }
                #expect(!indexes.contains("consent_outbox_pkey") && !indexes.contains("consent_keys_age"))
                #expect(indexes.contains("consent_outbox_order") && indexes.contains("consent_keys_pkey"))
            }
        }
    }
}
