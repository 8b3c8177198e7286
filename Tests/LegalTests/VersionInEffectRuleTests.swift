import Bus
import Contracts
import Foundation
import TestSupport
import Testing

@testable import LegalService

/// The rule of which version is in effect exists twice: in Legal's SQL (`legal.current`) and in
/// `Contracts` (``LegalVersionSummary/inEffect(_:at:)``, what the gateway's copy of the texts
/// switches by). Both must give the same answer for every time, ties included.
@Suite struct VersionInEffectRuleTests {
    @Test func contractsRuleAgreesWithLegalCurrentAtEveryTime() async throws {
        try await InProcessLegal.with(seeded: true) { legal in
            let base = Milliseconds.truncate(Date().addingTimeInterval(3600))
            // Two versions for the same instant (the later publication wins), one after them,
            // and one in effect at once.
            try await legal.publish(.termsOfService, "tie-a", "# Terms\n\nA\n", effectiveAt: base)
            try await Task.sleep(for: .milliseconds(5))
            try await legal.publish(.termsOfService, "tie-b", "# Terms\n\nB\n", effectiveAt: base)
            try await legal.publish(.termsOfService, "later", "# Terms\n\nLater\n", effectiveAt: base.addingTimeInterval(60))
            try await legal.publish(.termsOfService, "now", "# Terms\n\nNow\n")
            let history = try await legal.call(LegalHistory.self, .init(type: .termsOfService)).versions
            #expect(history.count == 5)
            let times = [
                Date(), base.addingTimeInterval(-0.001), base, base.addingTimeInterval(30), base.addingTimeInterval(60),
                base.addingTimeInterval(7200),
            ]
            var answers: [String] = []
            for time in times {
                let current = try await legal.call(LegalCurrent.self, .init(type: .termsOfService, at: time)).summary
                let ruled = try #require(LegalVersionSummary.inEffect(history, at: time))
                #expect(ruled == current, "at \(Timestamp.format(time))")
                answers.append(ruled.version)
            }
            #expect(answers == ["now", "now", "tie-b", "tie-b", "later", "later"])
            // Before the first version there is none, for both.
            let before = history.map(\.effectiveAt).min()!.addingTimeInterval(-1)
            #expect(LegalVersionSummary.inEffect(history, at: before) == nil)
            #expect(await legal.errorCode(LegalCurrent.self, .init(type: .termsOfService, at: before)) == .notFound)
        }
    }
}
