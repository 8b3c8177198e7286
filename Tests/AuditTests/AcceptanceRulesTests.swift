import Contracts
import Foundation
import Testing

@testable import AuditService

/// The re-acceptance rule without a database.
struct AcceptanceRulesTests {
    let day: TimeInterval = 86_400
    let start = Date(timeIntervalSince1970: 1_760_000_000)

    func version(_ name: String, effective days: Double, material: Bool) -> LegalVersionSummary {
        let at = start.addingTimeInterval(days * day)
        return LegalVersionSummary(
            type: .termsOfService, version: name, lastUpdated: at, publishedAt: at, effectiveAt: at, digest: name,
            material: material)
    }

    func status(_ versions: [LegalVersionSummary], _ last: AcceptanceRules.LastAction?, now days: Double) -> AcceptanceStatus {
        AcceptanceRules.status(of: .termsOfService, versions: versions, last: last, now: start.addingTimeInterval(days * day))
    }

    func accepted(_ version: String, at days: Double, _ action: AcceptanceAction = .accept) -> AcceptanceRules.LastAction {
        .init(action: action, version: version, recordedAt: start.addingTimeInterval(days * day))
    }

    @Test func neverAcceptedNeedsAcceptance() {
        let result = status([version("1.0", effective: 0, material: true)], nil, now: 1)
        #expect(result.currentVersion == "1.0")
        #expect(result.needsAcceptance)
        #expect(result.lastAction == nil)
    }

    @Test func acceptedCurrentDoesNot() {
        let result = status([version("1.0", effective: 0, material: true)], accepted("1.0", at: 1), now: 2)
        #expect(!result.needsAcceptance)
        #expect(result.lastVersion == "1.0")
    }

    @Test func declineNeedsAcceptance() {
        let result = status([version("1.0", effective: 0, material: true)], accepted("1.0", at: 1, .decline), now: 2)
        #expect(result.needsAcceptance)
        #expect(result.lastAction == .decline)
    }

    @Test func editorialVersionDoesNotAskAgain() {
        let versions = [version("1.0", effective: 0, material: true), version("1.0.1", effective: 5, material: false)]
        let result = status(versions, accepted("1.0", at: 1), now: 6)
        #expect(result.currentVersion == "1.0.1")
        #expect(!result.needsAcceptance)
    }

    @Test func materialVersionAsksAgainOnlyOnceInEffect() {
        let versions = [version("1.0", effective: 0, material: true), version("2.0", effective: 10, material: true)]
        let before = status(versions, accepted("1.0", at: 1), now: 9)
        #expect(before.currentVersion == "1.0")
        #expect(!before.needsAcceptance)
        let after = status(versions, accepted("1.0", at: 1), now: 11)
        #expect(after.currentVersion == "2.0")
        #expect(after.needsAcceptance)
        let reaccepted = status(versions, accepted("2.0", at: 12), now: 13)
        #expect(!reaccepted.needsAcceptance)
    }

    @Test func acceptingAnOldVersionAfterAMaterialOneStillNeedsAcceptance() {
        // A stale client accepts 1.0 after 2.0 (material) took effect: the user never agreed to 2.0.
        let versions = [version("1.0", effective: 0, material: true), version("2.0", effective: 10, material: true)]
        #expect(status(versions, accepted("1.0", at: 11), now: 12).needsAcceptance)
    }

    @Test func noVersionInEffect() {
        let result = status([version("1.0", effective: 10, material: true)], nil, now: 1)
        #expect(result.currentVersion == nil)
        #expect(result.needsAcceptance)
    }
}
