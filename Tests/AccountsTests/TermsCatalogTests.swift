import Bus
import Contracts
import Foundation
import TestSupport
import Testing

/// The terms version in effect as Accounts keeps it in memory (`TermsCatalog`): a version Legal
/// publishes while Accounts runs makes the old one stale, and one published for later takes over
/// at its time, with no call to Legal deciding it.
@Suite(.serialized) struct TermsCatalogTests {
    @Test func aVersionPublishedWhileRunningMakesTheOldOneStale() async throws {
        try await AccountsHarness.run { harness in
            let old = try await harness.currentTerms()
            let id = try #require(try await harness.signUp().id)
            // Answered from the catalog: it holds `old` as the version in effect.
            #expect(try await harness.accept(id, old).tosVersion == old)

            try await harness.publishTerms("9.0", material: true)
            try await Task.sleep(for: .milliseconds(300))
            let stale = try await harness.refusal { try await harness.accept(id, old) }
            #expect(stale.code == .conflict && stale.details?["currentVersion"] == "9.0")
            let accepted = try await harness.accept(id, "9.0")
            #expect(accepted.tosVersion == "9.0" && accepted.hasAcceptedTOS && !accepted.needsToAcceptTOS)
            // The reply's flags agree with Audit's own status.
            let read = try await harness.get(id)
            #expect(read.tosVersion == "9.0" && read.hasAcceptedTOS && !read.needsToAcceptTOS)
        }
    }

    @Test func aVersionPublishedForLaterTakesOverOnTime() async throws {
        try await AccountsHarness.run { harness in
            let old = try await harness.currentTerms()
            let id = try #require(try await harness.signUp().id)
            let effective = Date().addingTimeInterval(4)
            try await harness.publishTerms("9.1", material: true, effectiveAt: effective)
            let early = try await harness.refusal { try await harness.accept(id, "9.1") }
            if Date() < effective.addingTimeInterval(-0.5) {
                #expect(early.code == .conflict && early.details?["currentVersion"] == old)
            }

            try await Task.sleep(for: .seconds(max(0, effective.timeIntervalSinceNow) + 0.2))
            let stale = try await harness.refusal { try await harness.accept(id, old) }
            #expect(stale.code == .conflict && stale.details?["currentVersion"] == "9.1")
            #expect(try await harness.accept(id, "9.1").tosVersion == "9.1")
        }
    }
}
