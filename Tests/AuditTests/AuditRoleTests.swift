import Contracts
import Foundation
import Postgres
import TestSupport
import Testing

/// Audit's runtime role on the real executable's database: it adds evidence and reads it, but
/// may not change or delete it (``ServiceKit/ServiceName/appendOnlyTables``); an erasure goes
/// through `audit.erase_subject`, which runs as the schema's owner and changes only what an
/// erasure must.
@Suite struct AuditRoleTests {
    /// Audit's append-only tables, each with a column to try to overwrite.
    static let evidence = [
        "records": "client_ip", "checkpoints": "signature", "subjects": "secret", "erasures": "records", "legal_versions": "digest",
    ]

    /// Expects `sql` run by `pool`'s role to be refused for want of privilege (42501).
    static func expectRefused(_ pool: PostgresPool, _ sql: String, sourceLocation: SourceLocation = #_sourceLocation) async {
        #expect(await PrivilegeCheck.run(pool, sql) == .refused, "\(sql)", sourceLocation: sourceLocation)
    }

    static func count(_ pool: PostgresPool, _ table: String) async throws -> Int {
        try await pool.withConnection { db in try db.query("SELECT count(*)::bigint FROM audit.\(table)")[0].decode(Int.self, column: 0) }
    }

    @Test func theRuntimeRoleAddsAndReadsEvidenceButCannotChangeOrDeleteIt() async throws {
        try await AuditHarness.run(writers: 1) { harness in
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            let user = UUID()
            _ = try await harness.record(user, .termsOfService, version)
            // Audit checkpoints its chains when it stops: its role inserted every kind of row.
            await harness.stopAudit()
            let runtime = try harness.database.runtimePool(harness.auditRoles)
            for table in Self.evidence.keys.sorted() {
                let rows = try await Self.count(runtime, table)  // throws if it may not read them
                if table != "erasures" { #expect(rows >= 1, "\(table)") }
            }
            let before = try await Self.count(harness.database.pool, "records")
            for (table, column) in Self.evidence.sorted(by: { $0.key < $1.key }) {
                for sql in ["UPDATE audit.\(table) SET \(column) = \(column)", "DELETE FROM audit.\(table)", "TRUNCATE audit.\(table)"] {
                    await Self.expectRefused(runtime, sql)
                }
            }
            // The chain heads stay writable (every batch moves one), within the same privileges.
            try await runtime.withConnection { db in try db.execute("UPDATE audit.chains SET head_position = head_position WHERE false") }
            await runtime.close()
            #expect(try await Self.count(harness.database.pool, "records") == before)
            #expect(before == 1)
            try await harness.startAudit(writers: 1)
            #expect(try await harness.verify().valid)
        }
    }

    @Test func erasureThroughItsFunctionClearsOnlyThePersonalColumns() async throws {
        try await AuditHarness.run { harness in
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            let (erased, kept) = (UUID(), UUID())
            let erasedRecords = [
                try await harness.record(erased, .termsOfService, version).recordId,
                try await harness.record(erased, .termsOfService, version, .decline).recordId,
            ]
            _ = try await harness.record(kept, .termsOfService, version)
            let before = try await Self.rows(harness.database.pool)
            #expect(before.count == 3 && before.values.allSatisfy { !$0.personalCleared })

            let runtime = try harness.database.runtimePool(harness.auditRoles)
            let cleared = try await runtime.withConnection { db in
                try db.query("SELECT audit.erase_subject($1)", erased)[0].decode(Int.self, column: 0)
            }
            #expect(cleared == 2)
            let again = try await runtime.withConnection { db in
                try db.query("SELECT audit.erase_subject($1)", erased)[0].decode(Int.self, column: 0)
            }
            #expect(again == 0)
            await runtime.close()

            let after = try await Self.rows(harness.database.pool)
            #expect(Set(after.keys) == Set(before.keys))
            for (id, row) in after {
                let old = try #require(before[id])
                // Every hashed column as it was; the erased user's personal columns cleared, the other's kept.
                #expect(row.withoutPersonal == old.withoutPersonal, "\(id)")
                if erasedRecords.contains(id) { #expect(row.personalCleared, "\(id)") } else { #expect(row.whole == old.whole, "\(id)") }
            }
            let remaining = try await harness.database.pool.withConnection { db in
                try db.query(
                    """
                    SELECT (SELECT count(*) FROM audit.subjects WHERE user_id = $1)::bigint,
                           (SELECT count(*) FROM audit.subjects WHERE user_id = $2)::bigint,
                           (SELECT coalesce(sum(records), 0) FROM audit.erasures)::bigint
                    """, erased, kept)[0].decode(Int.self, Int.self, Int.self)
            }
            #expect(remaining.0 == 0 && remaining.1 == 1 && remaining.2 == 2, "subjects of the erased and kept user, records erased: \(remaining)")
            #expect(try await harness.verify().valid)

            // The function runs with its owner's rights, so only the runtime role may call it, and
            // with a search_path of its own.
            let function = try await harness.database.pool.withConnection { db in
                try db.query(
                    """
                    SELECT p.prosecdef, pg_get_userbyid(p.proowner)::text, array_to_string(p.proconfig, ','),
                           coalesce((SELECT bool_or(a.grantee = 0) FROM aclexplode(p.proacl) a), true)
                    FROM pg_proc p WHERE p.oid = 'audit.erase_subject(uuid)'::regprocedure
                    """)[0].decode(Bool.self, String.self, String.self, Bool.self)
            }
            #expect(function.0 && function.1 == "\(harness.database.name)_audit_owner", "\(function)")
            #expect(function.2 == "search_path=pg_catalog, pg_temp" && !function.3, "\(function)")
        }
    }

    /// One record as JSON text: whole, and without its personal columns (what erasure may change).
    struct Row: Equatable {
        let whole: String
        let withoutPersonal: String
        let personalCleared: Bool
    }

    static func rows(_ pool: PostgresPool) async throws -> [UUID: Row] {
        try await pool.withConnection { db in
            var rows: [UUID: Row] = [:]
            for row in try db.query(
                """
                SELECT record_id, to_jsonb(r)::text, (to_jsonb(r) - ARRAY['client_ip', 'user_agent', 'idempotency_hash'])::text,
                       client_ip IS NULL AND user_agent IS NULL AND idempotency_hash IS NULL
                FROM audit.records r
                """)
            {
                let (id, whole, rest, cleared) = try row.decode(UUID.self, String.self, String.self, Bool.self)
                rows[id] = Row(whole: whole, withoutPersonal: rest, personalCleared: cleared)
            }
            return rows
        }
    }
}
