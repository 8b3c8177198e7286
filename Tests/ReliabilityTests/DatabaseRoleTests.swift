import Contracts
import Foundation
import Postgres
import TestSupport
import Testing

@testable import Bus

extension ReliabilityTests {
    /// Least privilege in the database, on the real stack: the four services run as roles of their
    /// own (``Stack`` gives each its runtime role's `DATABASE_URL` and its schema owner's
    /// `DATABASE_MIGRATION_URL`), so a flaw in one service reaches that service's rows only.
    @Suite("Reliability: per-service database roles")
    struct DatabaseRoleTests {
        /// One table of each service's schema.
        static let tables = [
            "Legal": "legal.versions", "Accounts": "accounts.users", "Documents": "documents.documents", "Audit": "audit.records",
        ]

        @Test func eachServiceRoleReachesOnlyItsOwnSchema() async throws {
            try await Stack.run { stack in
                // The stack works end to end under its roles: a sign-up goes Accounts → Audit
                // (which follows Legal), a document goes to Documents with its bytes.
                let terms = try await stack.currentTerms()
                let user = try await stack.accounts.call(
                    AccountsGetOrCreate.self, stack.signUpRequest(appleId: "apple.roles." + UUID().uuidString, terms: terms),
                    principal: Stack.gateway)
                let owner = try #require(user.id)
                _ = try await stack.documents.call(
                    DocumentsCreate.self,
                    .init(ownerId: owner, type: .transcript, title: "t", fileType: "application/pdf", fileName: "t.pdf", length: 10),
                    principal: .user(owner.uuidString.lowercased()))
                try await stack.waitForChained()
                #expect(try await stack.count("SELECT count(*)::bigint FROM audit.records") >= 1)

                var refused = 0
                for (service, own) in Self.tables.sorted(by: { $0.key < $1.key }) {
                    let pool = try stack.database.runtimePool(stack.environments[service]!)
                    let role = try await pool.withConnection { db in
                        try db.query("SELECT current_user::text, rolsuper FROM pg_roles WHERE rolname = current_user")[0].decode(
                            String.self, Bool.self)
                    }
                    #expect(role.0 == "\(stack.database.name)_\(service.lowercased())" && !role.1, "\(service) runs as \(role)")
                    // Its own rows: yes. Another service's: neither read nor write. Structure: never.
                    _ = try await pool.withConnection { db in try db.query("SELECT count(*) FROM \(own)") }
                    var attempts = ["CREATE TABLE \(own)_extra (id int)", "ALTER TABLE \(own) ADD COLUMN extra int", "DROP TABLE \(own)"]
                    attempts.append("TRUNCATE \(own)")
                    attempts.append("SELECT * FROM public.users")
                    for (other, table) in Self.tables where other != service {
                        attempts += ["SELECT * FROM \(table) LIMIT 1", "DELETE FROM \(table)"]
                    }
                    for sql in attempts {
                        do {
                            try await pool.withConnection { db in try db.executeScript(sql) }
                            Issue.record("\(service)'s role was allowed: \(sql)")
                        } catch let error as PostgresError {
                            #expect(error.sqlState == "42501", "\(service): \(sql): \(error)")
                            refused += 1
                        }
                    }
                    await pool.close()
                }
                // Nothing the refused statements named was touched.
                #expect(try await stack.count("SELECT count(*)::bigint FROM accounts.users") == 1)
                #expect(try await stack.count("SELECT count(*)::bigint FROM documents.documents") == 1)
                print("RELIABILITY roles: 4 services on their own roles; \(refused) cross-schema reads/writes and DDL attempts refused with 42501")
            }
        }

        @Test func aServiceRefusesAnOverPrivilegedRuntimeRole() async throws {
            try await TestDatabase.withDatabase { database in
                var environment = try await ServiceEnvironment.make(database: database, schema: "legal", rpc: ipcEndpoint())
                // The admin (a superuser) as the runtime role, beside an owner for migrations.
                environment["DATABASE_URL"] = database.url
                let result = try await ChildProcess.run(ChildProcess.product("Legal"), [], environment: environment)
                #expect(result.status == 1)
                #expect((result.output + result.errors).contains("SUPERUSER"), "\(result.output)\(result.errors)")
                #expect(!(result.output + result.errors).contains(environment["DATABASE_MIGRATION_URL"]!))
                #expect(
                    try await database.pool.withConnection { db in
                        try db.query("SELECT to_regclass('legal.versions')::text")[0].decode(String?.self, column: 0)
                    }
                        == nil)
            }
        }
    }
}
