import Bus
import Contracts
import Foundation
import Locks
import Testing

@testable import AuditService

/// The catalog's look-up of a version it has not seen: against the real Legal service and the
/// audit schema the real Audit service migrated.
@Suite struct VersionCatalogTests {
    /// A burst of acceptances of a version Audit has not learned yet makes one call to Legal, not
    /// one each: each call carries the whole document, and hundreds of them at once outlasted the
    /// call's deadline on a busy machine.
    @Test func concurrentMissesOfOneVersionShareOneLookUp() async throws {
        try await AuditHarness.run(writers: 1) { harness in
            // Without the Audit service nothing applies Legal's events, so the table never has it.
            await harness.stopAudit()
            let published = try await harness.publish(.termsOfService, "3.0-burst", material: true)
            let asked = LockedValue(0)
            let catalog = VersionCatalog(pool: harness.database.pool) { [legal = harness.legalClient] in
                asked.withLock { $0 += 1 }
                return legal
            }
            let found = try await withThrowingTaskGroup(of: LegalVersionSummary.self) { group in
                for _ in 0..<200 { group.addTask { try await catalog.version(.termsOfService, "3.0-burst") } }
                return try await group.reduce(into: [LegalVersionSummary]()) { $0.append($1) }
            }
            #expect(found.count == 200 && found.allSatisfy { $0.digest == published.digest })
            #expect(asked.withLock { $0 } == 1)
            // What the look-up learned is kept: the next caller asks nobody.
            _ = try await catalog.version(.termsOfService, "3.0-burst")
            #expect(asked.withLock { $0 } == 1)

            // A version nobody published: every waiter gets the refusal, from one question.
            let refusals = await withTaskGroup(of: ErrorCode?.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        do {
                            _ = try await catalog.version(.termsOfService, "9.9-never")
                            return nil
                        } catch { return (error as? BusError)?.code }
                    }
                }
                return await group.reduce(into: [ErrorCode?]()) { $0.append($1) }
            }
            #expect(refusals.count == 50 && refusals.allSatisfy { $0 == .invalidArgument })
            #expect(asked.withLock { $0 } == 2)
        }
    }
}
