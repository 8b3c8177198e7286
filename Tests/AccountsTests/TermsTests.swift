import Bus
import Contracts
import Foundation
import TestSupport
import Testing

/// `accounts.accept_terms` / `accounts.decline_terms` and the terms flags after them, through the
/// real Audit and Legal services.
@Suite(.serialized) struct TermsTests {
    @Test func declineThenAcceptShowsInTheNextRead() async throws {
        try await AccountsHarness.run { harness in
            let version = try await harness.currentTerms()
            let id = try #require(try await harness.signUp().id)

            let declined = try await harness.decline(id, version)
            #expect(declined.needsToAcceptTOS && !declined.hasAcceptedTOS)
            let afterDecline = try await harness.get(id)
            #expect(afterDecline.needsToAcceptTOS && !afterDecline.hasAcceptedTOS)
            #expect(try await harness.auditHistory(id).first?.receipt.action == .decline)

            let accepted = try await harness.accept(id, version, key: "accept-1")
            #expect(accepted.hasAcceptedTOS && !accepted.needsToAcceptTOS && accepted.tosVersion == version)
            let read = try await harness.get(id)
            #expect(read.hasAcceptedTOS && !read.needsToAcceptTOS)
            let latest = try await harness.auditHistory(id).first?.receipt.recordedAt
            #expect(read.tosAcceptedAt == latest)

            // A retry of the same call (same idempotency key) records once.
            _ = try await harness.accept(id, version, key: "accept-1")
            let actions = try await harness.auditHistory(id).map(\.receipt.action)
            #expect(actions == [.accept, .decline, .accept])
        }
    }

    @Test func staleOrUnknownVersionIsAConflictAndRecordsNothing() async throws {
        try await AccountsHarness.run { harness in
            let version = try await harness.currentTerms()
            let id = try #require(try await harness.signUp().id)
            for stale in ["2024-01-01", "0.1"] {
                let accept = try await harness.refusal { try await harness.accept(id, stale) }
                #expect(accept.code == .conflict && accept.details?["currentVersion"] == version)
                let decline = try await harness.refusal { try await harness.decline(id, stale) }
                #expect(decline.code == .conflict)
            }
            // A version Legal could never have published is a malformed request, not a stale one.
            for malformed in [String(repeating: "1", count: 33), "has space"] {
                let accept = try await harness.refusal { try await harness.accept(id, malformed) }
                #expect(accept.code == .invalidArgument && accept.message.hasPrefix("tosVersion"), "\(accept)")
                #expect(try await harness.refusal { try await harness.decline(id, malformed) }.code == .invalidArgument)
            }
            #expect(try await harness.auditHistory(id).count == 1)
            let unknown = try await harness.refusal { try await harness.accept(UUID(), version) }
            #expect(unknown.code == .notFound)
        }
    }

    @Test func aNewMaterialVersionMakesUsersAcceptAgainAnEditorialOneDoesNot() async throws {
        try await AccountsHarness.run { harness in
            let id = try #require(try await harness.signUp().id)
            #expect(!(try await harness.get(id).needsToAcceptTOS))

            try await harness.publishTerms("1.1", material: false)
            try await harness.waitForAuditToLearn("1.1", user: id)
            let editorial = try await harness.get(id)
            #expect(!editorial.needsToAcceptTOS && !editorial.hasAcceptedTOS)

            try await harness.publishTerms("2.0", material: true)
            try await harness.waitForAuditToLearn("2.0", user: id)
            let material = try await harness.get(id)
            #expect(material.needsToAcceptTOS && !material.hasAcceptedTOS)
            // The old version is now stale; the new one clears it.
            #expect(try await harness.refusal { try await harness.accept(id, "1.1") }.code == .conflict)
            let accepted = try await harness.accept(id, "2.0")
            #expect(accepted.hasAcceptedTOS && !accepted.needsToAcceptTOS && accepted.tosVersion == "2.0")
            // An app that still sends the old version signs up: the account exists without an
            // acceptance of terms no longer in effect, and needs to accept the new ones.
            let late = try await harness.getOrCreate(.init(appleId: "apple.late", state: "CA", eligibilityCertified: true, tosVersion: "1.0"))
            let lateId = try #require(late.id)
            #expect(late.needsToAcceptTOS && !late.hasAcceptedTOS && late.tosVersion == nil && late.hasConfirmedEligibility)
            #expect(try await harness.auditHistory(lateId).isEmpty)
            #expect(try await harness.standing(lateId).acceptedVersion == nil)
            // The same Apple id again is the same account, still without an acceptance.
            let again = try await harness.getOrCreate(.init(appleId: "apple.late", state: "CA", eligibilityCertified: true, tosVersion: "1.0"))
            #expect(again.id == lateId && again.needsToAcceptTOS)
            let wrong = try await harness.refusal { try await harness.accept(lateId, "1.0") }
            #expect(wrong.code == .conflict && wrong.details?["currentVersion"] == "2.0" && wrong.message.contains("GET /api/terms"))
            let caughtUp = try await harness.accept(lateId, "2.0")
            #expect(caughtUp.hasAcceptedTOS && !caughtUp.needsToAcceptTOS)
            #expect(try await harness.standing(lateId).acceptedVersion == "2.0")
            #expect(try await harness.auditHistory(lateId).map(\.receipt.action) == [.accept])
        }
    }

    /// `accounts.terms_standing`, what the gateway enforces by: the accepted version while the
    /// user's last word is a recorded acceptance, nil after a decline; for services only.
    @Test func standingFollowsAcceptAndDecline() async throws {
        try await AccountsHarness.run { harness in
            let version = try await harness.currentTerms()
            let id = try #require(try await harness.signUp().id)
            let signedUp = try await harness.standing(id)
            #expect(signedUp.acceptedVersion == version)
            _ = try await harness.decline(id, version)
            let declined = try await harness.standing(id)
            #expect(declined.acceptedVersion == nil)
            // The gateways hear of it even when no session was open: `accounts.terms_declined`,
            // numbered after the sequence the first answer was read at (a decline that wrote no
            // event times out here).
            let event = try await withTimeout(.seconds(10), "the terms_declined event") {
                while true {
                    for event in try await harness.accountsEvents() where event.type == TermsEvents.declined {
                        if try event.decodePayload(TermsDeclined.self).userId == id { return event }
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            let sequence = try #require(event.sequence, "an outbox event carries its sequence")
            #expect(sequence > signedUp.sequence)
            _ = try await harness.accept(id, version)
            #expect(try await harness.standing(id).acceptedVersion == version)
            #expect(try await harness.refusal { try await harness.standing(UUID()) }.code == .notFound)
            let asUser = try await harness.refusal {
                try await harness.accountsClient.call(AccountsTermsStanding.self, .init(userId: id), principal: .user(id.uuidString))
            }
            #expect(asUser.code == .forbidden)
        }
    }
}
