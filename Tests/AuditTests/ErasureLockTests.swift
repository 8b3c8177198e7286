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
    @Test func anErasureWaitsForAnOpenPageOfTheSameUserAndRunsOnceItCommits() async throws {
        try await AuditHarness.run { harness in
            let version = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            let (user, other) = (UUID(), UUID())
            _ = try await harness.record(user, .termsOfService, version)
            _ = try await harness.record(other, .termsOfService, version)
            let runtime = try harness.database.runtimePool(harness.auditRoles)
            defer { Task { await runtime.close() } }
            let users = PostgresArrayLiteral.of([user.uuidString.lowercased()])
            let pageOpen = AsyncStream<Void>.makeStream()
            let page = Task {
                try await runtime.withTransaction { db in
                    try db.query(BatchWriter.lockSubjects, users)
                    pageOpen.continuation.yield()
                    try db.execute("SELECT pg_sleep(1.5)")
                }
            }
            var opened = pageOpen.stream.makeAsyncIterator()
            _ = await opened.next()
            // While the page is open: the erasure of its user cannot take its lock (55P03)…
            let refused = await #expect(throws: PostgresError.self) {
                try await runtime.withTransaction { db in
                    try db.execute("SET LOCAL lock_timeout = '200ms'")
                    _ = try db.query("SELECT audit.erase_subject($1)", user)
                }
            }
            #expect(refused?.sqlState == "55P03", "\(String(describing: refused))")
            // …while another user's erasure is not held up.
            let otherErased = try await runtime.withTransaction { db in
                try db.execute("SET LOCAL lock_timeout = '200ms'")
                return try db.query("SELECT audit.erase_subject($1)", other)[0].decode(Int.self, column: 0)
            }
            #expect(otherErased == 1)
            // Once the page has committed, the erasure runs and clears the user's record.
            try await page.value
            let erased = try await runtime.withConnection { db in
                try db.query("SELECT audit.erase_subject($1)", user)[0].decode(Int.self, column: 0)
            }
            #expect(erased == 1)
        }
    }
}
