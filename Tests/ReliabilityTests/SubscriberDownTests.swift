import Bus
import Contracts
import Foundation
import TestSupport
import Testing

extension ReliabilityTests {
    /// A subscriber down while events are published: Documents and Audit are stopped, accounts are
    /// deleted (Accounts' `account.deleted`) and a legal version is published (Legal's
    /// `legal.published`); started again, each catches up through the publisher's outbox and applies
    /// every event exactly once, also after a second, SIGKILLed restart.
    @Suite("Reliability: a subscriber down")
    struct SubscriberDownTests {
        @Test func subscribersCatchUpAndApplyEachEventOnce() async throws {
            let deletedCount = 5
            try await Stack.run { stack in
                let terms = try await stack.currentTerms()
                var users: [UUID] = []
                for _ in 0..<(deletedCount + 1) { users.append(try await stack.signUp(terms: terms)) }
                for user in users {
                    for title in ["Transcript", "Stats"] {
                        _ = try await stack.documents.call(
                            DocumentsCreate.self,
                            .init(ownerId: user, type: .transcript, title: title, fileType: "application/pdf", fileName: "t.pdf", length: 10),
                            principal: .user(user.uuidString.lowercased()))
                    }
                }
                await stack.stop("Documents")
                await stack.stop("Audit")
                let deleted = Array(users.prefix(deletedCount))
                for user in deleted { try await stack.deleteAccount(user) }
                let version = "reliability-\(UUID().uuidString.prefix(8))"
                _ = try await stack.legal.call(
                    LegalPublish.self,
                    .init(
                        type: .privacyPolicy, version: version, content: "# Privacy\n\n## 1. Text\n\nVersion \(version).\n",
                        effectiveAt: nil, material: false),
                    principal: Stack.operatorPrincipal)

                let restarted = ContinuousClock.now
                try await stack.start("Documents")
                try await stack.start("Audit")
                try await waitUntil("Documents and Audit caught up", stack) {
                    let cleanups = try await $0.count("SELECT count(*)::bigint FROM documents.account_cleanups")
                    let versions = try await $0.count("SELECT count(*)::bigint FROM audit.legal_versions WHERE version = $1", version)
                    return cleanups == deletedCount && versions == 1
                }
                let caughtUpIn = ContinuousClock.now - restarted

                // A second start, after a SIGKILL, must not apply anything again.
                stack.kill("Documents")
                stack.kill("Audit")
                try await stack.start("Documents")
                try await stack.start("Audit")
                _ = try await stack.documents.call(DocumentsUsage.self, .init(userId: UUID()), principal: .service("accounts"))
                try await Task.sleep(for: .seconds(1))

                let cleanups = try await stack.database.pool.withConnection { db in
                    try db.query("SELECT user_id, documents FROM documents.account_cleanups").map { try $0.decode(UUID.self, Int.self) }
                }
                #expect(Set(cleanups.map(\.0)) == Set(deleted))
                #expect(cleanups.allSatisfy { $0.1 == 2 }, "each cleanup removed the user's 2 documents: \(cleanups)")
                #expect(try await stack.count("SELECT count(*)::bigint FROM documents.documents") == 2, "only the kept user's documents remain")
                #expect(try await stack.count("SELECT count(*)::bigint FROM audit.legal_versions WHERE version = $1", version) == 1)
                // Each subscriber's cursor stands exactly at its publisher's last sequence.
                let accountsLast = try await stack.count("SELECT coalesce(max(sequence), 0)::bigint FROM accounts.outbox")
                let legalLast = try await stack.count("SELECT coalesce(max(sequence), 0)::bigint FROM legal.outbox")
                #expect(accountsLast == deletedCount)
                #expect(try await stack.count("SELECT last_sequence FROM documents.event_cursors WHERE publisher = 'accounts'") == accountsLast)
                #expect(try await stack.count("SELECT last_sequence FROM audit.event_cursors WHERE publisher = 'legal'") == legalLast)
                print(
                    "RELIABILITY subscriber-down deleted=\(deletedCount) cleanups=\(cleanups.count) legal-version-rows=1 caught-up-in=\(caughtUpIn)")
            }
        }
    }
}

/// Polls `condition` every 100 ms for up to `limit`.
func waitUntil(
    _ what: String, _ stack: Stack, limit: Duration = .seconds(30), _ condition: @escaping @Sendable (Stack) async throws -> Bool
) async throws {
    try await withTimeout(limit, what) {
        while try await !condition(stack) { try await Task.sleep(for: .milliseconds(100)) }
    }
}
