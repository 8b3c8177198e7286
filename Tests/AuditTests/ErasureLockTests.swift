import Contracts
import Foundation
import Postgres
import TestSupport
import Testing

@testable import AuditService

/// An erasure and a consent page that has read the user's subject exclude each other (migration
/// 0130): `audit.erase_subject` cannot take its lock while a page of the same user is open, so it
/// cannot delete the subject between the page reading it and the page's records committing under
/// it (which left a record's IP address and user agent behind in DeletionTests' race). Run as
/// Audit's runtime role on the real executable's database.
@Suite struct ErasureLockTests {
    /// The advisory lock that holds the test's page open.
    static let gateKey: Int64 = 0x00E1_A5E0_0130
    @Test func anErasureWaitsForAnOpenPageOfTheSameUserAndRunsOnceItCommits() async throws {
        try await AuditHarness.run { harness in
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            let (user, other) = (UUID(), UUID())
            _ = try await harness.record(user, .termsOfService, version)
            _ = try await harness.record(other, .termsOfService, version)
            let runtime = try harness.database.runtimePool(harness.auditRoles)
            defer { Task { await runtime.close() } }
            let users = PostgresArrayLiteral.of([user.uuidString.lowercased()])
            // The page stays open until the test lets it end: it then waits for an advisory lock
            // the test holds. (Held for a fixed 1.5 s, it once ended before a loaded run's erasure
            // below had its connection, and the erasure ran instead of being refused.)
            let gate = try await PostgresConnection.connect(
                configuration: try PostgresConfiguration(url: harness.database.url, applicationName: "compass-tests"),
                logger: TestDatabase.logger())
            try await gate.run { db in _ = try db.query("SELECT pg_advisory_lock($1)", Self.gateKey) }
            let pageOpen = AsyncStream<Void>.makeStream()
            let page = Task {
                try await runtime.withTransaction { db in
                    try db.query(BatchWriter.lockSubjects, users)
                    pageOpen.continuation.yield()
                    _ = try db.query("SELECT pg_advisory_xact_lock($1)", Self.gateKey)
                }
            }
            var opened = pageOpen.stream.makeAsyncIterator()
            _ = await opened.next()
            let checked: Result<Int, any Error>
            do {
                // While the page is open: the erasure of its user cannot take its lock (55P03)…
                let refused = await #expect(throws: PostgresError.self) {
                    try await runtime.withTransaction { db in
                        try db.execute("SET LOCAL lock_timeout = '200ms'")
                        _ = try db.query("SELECT audit.erase_subject($1)", user)
                    }
                }
                #expect(refused?.sqlState == "55P03", "\(String(describing: refused))")
                // …while another user's erasure is not held up.
                checked = .success(
                    try await runtime.withTransaction { db in
                        try db.execute("SET LOCAL lock_timeout = '200ms'")
                        return try db.query("SELECT audit.erase_subject($1)", other)[0].decode(Int.self, column: 0)
                    })
            } catch {
                checked = .failure(error)
            }
            await gate.close()  // its session's lock goes with it: the page commits
            #expect(try checked.get() == 1)
            // Once the page has committed, the erasure runs and clears the user's record.
            try await page.value
            let erased = try await runtime.withConnection { db in
                try db.query("SELECT audit.erase_subject($1)", user)[0].decode(Int.self, column: 0)
            }
            #expect(erased == 1)
        }
    }
}
