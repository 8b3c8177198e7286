import Bus
import Contracts
import Foundation
import TestSupport
import Testing

/// "The `account.deleted` event reaching a subscriber that was down when it was
/// emitted". Audit consumes `account.deleted`; here Accounts' own erasure calls are kept out of
/// the way (its sweep waits an hour, and its call right after the deletion finds Audit down and
/// gives up before Audit returns), so only Audit's catch-up through `accounts.events.since` can
/// erase the subject.
@Suite(.serialized) struct AuditCatchUpTests {
    @Test func auditStoppedDuringTheDeletionErasesTheSubjectWhenItComesBack() async throws {
        try await AccountsHarness.run { harness in
            try await harness.restartAccounts(rules: nil, extra: ["ACCOUNTS_ERASURE_SWEEP_INTERVAL": "1h"])
            let id = try #require(try await harness.signUp().id)
            #expect(try await harness.auditHistory(id).count == 1)
            let request = try await harness.requestDeletion(id)
            await harness.stop("Audit")
            _ = try await harness.confirmDeletion(id, request.requestId)
            // The deletion answered without waiting out that call (``DeletionHandlers/erasureWait``),
            // which goes on in the background until its own deadline: Audit returns after it.
            try await withTimeout(.seconds(30), "Accounts' erasure call giving up") {
                while !harness.output(of: "Accounts").contains("audit erasure failed") {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }

            try await harness.startAudit()
            try await withTimeout(.seconds(30), "audit catching up on account.deleted") {
                while try await !harness.auditHistory(id).isEmpty { try await Task.sleep(for: .milliseconds(100)) }
            }
            // Audit did it, not Accounts: its erasure is still marked to do.
            #expect(try await harness.erasureMarked(id) == false)
            // The proof stays, pseudonymised, and the chain still verifies.
            #expect(try await harness.auditRecordCount() == 1)
            let verified = try await harness.auditClient.call(
                AuditVerify.self, Empty(), principal: AccountsHarness.operatorPrincipal, timeout: .seconds(30))
            #expect(verified.valid)
        }
    }
}

extension AccountsHarness {
    func erasureMarked(_ id: UUID) async throws -> Bool? {
        try await database.pool.withConnection { db in
            try db.query("SELECT audit_erased_at IS NOT NULL FROM accounts.deleted_accounts WHERE user_id = $1", id).first?.decode(
                Bool.self, column: 0)
        }
    }
}
