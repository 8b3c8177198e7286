import Bus
import Contracts
import Foundation
import Locks
import TestSupport
import Testing

/// `accounts.consents_pending` (``AccountsConsentsPending``): where one user's last entry still in
/// the consent stream is, which Audit's reads of that user's records wait to have chained (after an
/// outage, reads that did not wait answered without acts the user was told were recorded).
@Suite(.serialized) struct ConsentPendingTests {
    @Test func aReadWaitsForTheUsersOwnActsAndNoOneElses() async throws {
        try await AccountsHarness.run(extra: ConsentStreamTests.quick) { harness in
            let version = try await harness.currentTerms()
            let athlete = try #require(try await harness.signUp().id)
            let other = try #require(try await harness.signUp().id)
            try await harness.waitForChained()
            #expect(try await harness.pendingConsent(of: athlete) == nil, "nothing of theirs is left in the stream")
            await harness.stop("Audit")
            _ = try await harness.accept(athlete, version)
            _ = try await harness.accept(other, version)
            _ = try await harness.accept(athlete, version)
            let entries = try await harness.streamEntries(count: 3)
            #expect(try await harness.pendingConsent(of: athlete) == entries.last(where: { $0.userId == athlete })?.position)
            #expect(try await harness.pendingConsent(of: other) == entries.last(where: { $0.userId == other })?.position)
            #expect(try await harness.pendingConsent(of: UUID()) == nil)
            // The stream's entries carry IP addresses: not for the user, nor for another service.
            for principal in [Principal.user(athlete.uuidString.lowercased()), .service("gateway")] {
                let refused = try await harness.refusal {
                    try await harness.accountsClient.call(AccountsConsentsPending.self, .init(userId: athlete), principal: principal)
                }
                #expect(refused.code == .forbidden)
            }

            // A backlog of other users' acts after theirs, then one more of theirs at its end.
            var others: [UUID] = []
            for _ in 0..<20 { others.append(try #require(try await harness.signUp().id)) }
            let backlogUsers = others
            let stop = LockedValue(false)
            let load = Task { try await harness.acceptInBatches(backlogUsers, version: version, agent: "backlog", until: stop) }
            try await withTimeout(.seconds(60), "a backlog of 2,500 acts") {
                while try await harness.streamRows() < 2_500 { try await Task.sleep(for: .milliseconds(50)) }
            }
            stop.withLock { $0 = true }
            _ = try await load.value
            _ = try await harness.accept(athlete, version)

            // Audit back: once it has chained its first page (it has found Accounts answering), a
            // read at once, with pages of the backlog still to chain, has all three acts.
            let before = try await harness.auditRecordCount()
            try await harness.startAudit()
            try await withTimeout(.seconds(60), "Audit chaining its first page") {
                while try await harness.auditRecordCount() == before { try await Task.sleep(for: .milliseconds(2)) }
            }
            let history = try await harness.auditClient.call(
                AuditHistory.self, .init(userId: athlete, documentType: .termsOfService), principal: .service("tests"), timeout: .seconds(30))
            #expect(history.records.count == 4, "the sign-up and all three acceptances")
            try await harness.waitForChained()
            #expect(try await harness.pendingConsent(of: athlete) == nil)
        }
    }
}

extension AccountsHarness {
    func pendingConsent(of user: UUID) async throws -> ConsentStreamPosition? {
        try await accountsClient.call(AccountsConsentsPending.self, .init(userId: user), principal: Self.operatorPrincipal).latest
    }
}
