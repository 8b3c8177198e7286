import AccountsService
import Foundation
import Postgres
import ServiceKit
import TestSupport
import Testing

/// Accounts migration 0190 on a database that has keys: the idempotency keys of `consent_keys`
/// move onto their users' rows (and their table goes), so a retry made before the upgrade is still
/// answered from the first call after it; and `consent_keys_with` drops keys older than a day.
@Suite struct ConsentKeysMigrationTests {
    @Test func keysKeptBeforeTheUpgradeAreOnTheirUsersAfterIt() async throws {
        try await TestDatabase.withSchema { db in
            let all = OutboxSchema.migrations + (try AccountsServiceDescription.migrations())
            let before = all.filter { $0.version < 190 }
            #expect(before.count == all.count - 1, "0190 is the last migration")
            _ = try await Migrator(schema: db.name, migrations: before, logger: db.logger).run(on: db.pool)
            let (first, second, keyless) = (UUID(), UUID(), UUID())
            try await db.pool.withConnection { connection in
                for user in [first, second, keyless] {
                    try connection.execute(
                        """
                        INSERT INTO users (id, apple_id, state, eligibility_confirmed_at, eligibility_rules_version)
                        VALUES ($1, $2, 'CA', now(), 'rules-1')
                        """, user, "apple-\(user)")
                }
                try connection.execute(
                    """
                    INSERT INTO consent_keys (user_id, key, version, recorded_ms)
                    VALUES ($1, 'k1', 'v1', 1000), ($1, 'k2', 'v2', 2000), ($2, 'k1', 'v1', 3000)
                    """, first, second)
            }
            #expect(try await Migrator(schema: db.name, migrations: all, logger: db.logger).run(on: db.pool) == ["0190_consent_keys_on_users"])
            try await db.pool.withConnection { connection in
                let expected = [first: #"{"k1": 1000, "k2": 2000}"#, second: #"{"k1": 3000}"#, keyless: "{}"]
                for (user, keys) in expected {
                    let stored = try connection.query("SELECT consent_keys::text FROM users WHERE id = $1", user)[0]
                    #expect(try stored.decode(String.self, column: 0) == keys)
                }
                #expect(try connection.query("SELECT to_regclass('consent_keys') IS NULL")[0].decode(Bool.self, column: 0))
                let day: Int64 = 86_400_000
                let kept = try connection.query(
                    "SELECT consent_keys_with($1::jsonb, '{\"new\": 5}'::jsonb, $2::bigint)::text", #"{"old": 1000, "recent": 2000}"#,
                    1000 + day + 1
                )[0].decode(String.self, column: 0)
                #expect(kept == #"{"new": 5, "recent": 2000}"#, "a key recorded more than a day before goes; one a day old stays")
            }
        }
    }
}
