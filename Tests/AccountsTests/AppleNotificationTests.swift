import AppleStandIn
import Bus
import Contracts
import Foundation
import TestSupport
import Testing

/// Sign in with Apple server-to-server notifications: each type, repeats, refusals.
@Suite(.serialized) struct AppleNotificationTests {
    @Test func emailDisabledAndEnabledStoreTheFlagOnce() async throws {
        try await AccountsHarness.run { harness in
            let appleId = "apple.mail-\(UUID().uuidString)"
            let id = try #require(try await harness.signUp(appleId: appleId).id)
            let disabled = try AppleStandIn.notification(type: "email-disabled", subject: appleId, eventTime: 1_700_000_000)
            #expect(try await harness.notify(disabled) == .init(outcome: "applied", eventType: "email-disabled"))
            #expect(try await harness.appleEmailDisabled(id) == true)
            let enabled = try AppleStandIn.notification(type: "email-enabled", subject: appleId, eventTime: 1_700_000_100)
            #expect(try await harness.notify(enabled).outcome == "applied")
            #expect(try await harness.appleEmailDisabled(id) == false)
            // The first notification again (a retry, or the same event signed anew): nothing changes.
            #expect(try await harness.notify(disabled).outcome == "duplicate")
            let resigned = try AppleStandIn.notification(type: "email-disabled", subject: appleId, eventTime: 1_700_000_000)
            #expect(try await harness.notify(resigned).outcome == "duplicate")
            #expect(try await harness.appleEmailDisabled(id) == false)
        }
    }

    @Test func consentRevokedEndsSessionsAndDropsTheAppleToken() async throws {
        let apple = try AppleTokenStandIn()
        defer { apple.stop() }
        try await AccountsHarness.run(extra: apple.environment) { harness in
            let appleId = "apple.consent-\(UUID().uuidString)"
            let id = try #require(try await harness.signUp(appleId: appleId).id)
            let session = try await harness.signIn(try AppleStandIn.token(subject: appleId), code: "code-c")
            #expect(session.appleTokenStored == true)
            #expect(try await harness.verifySession(session.sessionToken).userId == id)
            let revoked = try AppleStandIn.notification(type: "consent-revoked", subject: appleId)
            #expect(try await harness.notify(revoked).outcome == "applied")
            #expect(try await harness.refusal { try await harness.verifySession(session.sessionToken) }.code == .unauthenticated)
            #expect(try await harness.refusal { try await harness.refreshSession(session.refreshToken) }.code == .unauthenticated)
            #expect(try await harness.appleTokenRows() == 0)
            // The account stays; Apple was not asked to revoke what the user already revoked.
            #expect(try await harness.get(id).id == id)
            #expect(apple.revokeAttempts == 0)
            #expect(try await harness.notify(revoked).outcome == "duplicate")
        }
    }

    @Test func accountDeleteDeletesAtOnceWithACertificate() async throws {
        try await AccountsHarness.run { harness in
            let appleId = "apple.gone-\(UUID().uuidString)"
            let id = try #require(try await harness.signUp(appleId: appleId).id)
            let session = try await harness.signIn(try AppleStandIn.token(subject: appleId))
            let notice = try AppleStandIn.notification(type: "account-delete", subject: appleId, eventTime: 1_700_000_500)
            let reply = try await harness.notify(notice)
            #expect(reply.outcome == "applied")
            let certificateId = try #require(reply.certificateId)
            #expect(try await harness.refusal { try await harness.get(id) }.code == .gone)
            #expect(try await harness.refusal { try await harness.verifySession(session.sessionToken) }.code == .unauthenticated)
            let certificate = try await harness.accountsClient.call(
                AccountsDeletionCertificate.self, .init(certificateId: certificateId), principal: .anonymous)
            #expect(certificate.claims.trigger == "apple_account_delete")
            #expect(certificate.claims.requestedAt == Date(timeIntervalSince1970: 1_700_000_500))
            // The same path as a confirmed deletion: the event, then the Audit erasure.
            #expect(try await harness.accountsEvents().map(\.type) == [AccountsEvents.deleted])
            try await harness.waitForErasure(id)
            // A repeat changes nothing: no second event, no second certificate.
            #expect(try await harness.notify(notice).outcome == "duplicate")
            #expect(try await harness.accountsEvents().count == 1)
        }
    }

    @Test func unknownAppleIdsAndTypesAreAcceptedAndIgnored() async throws {
        try await AccountsHarness.run { harness in
            let unknown = try AppleStandIn.notification(type: "account-delete", subject: "apple.nobody-\(UUID().uuidString)")
            #expect(try await harness.notify(unknown).outcome == "ignored")
            let appleId = "apple.other-\(UUID().uuidString)"
            let id = try #require(try await harness.signUp(appleId: appleId).id)
            let strange = try AppleStandIn.notification(type: "something-new", subject: appleId)
            #expect(try await harness.notify(strange) == .init(outcome: "ignored", eventType: "something-new"))
            #expect(try await harness.get(id).id == id)
            #expect(try await harness.accountsEvents().isEmpty)
        }
    }

    @Test func forgedOrMisaddressedNotificationsAreRefusedAndChangeNothing() async throws {
        try await AccountsHarness.run { harness in
            let appleId = "apple.forged-\(UUID().uuidString)"
            let id = try #require(try await harness.signUp(appleId: appleId).id)
            let forged = try AppleStandIn.notification(type: "account-delete", subject: appleId, signer: AppleStandIn.otherKey)
            let misaddressed = try AppleStandIn.notification(type: "account-delete", subject: appleId, audience: "com.other.app")
            for (payload, code) in [(forged, ErrorCode.unauthenticated), (misaddressed, .unauthenticated), ("not.a.jwt", .invalidArgument)] {
                let refused = try await harness.refusal { try await harness.notify(payload) }
                #expect(refused.code == code)
            }
            let user = try await harness.get(id)
            #expect(user.id == id)
            let rows = try await harness.notificationRows()
            #expect(rows == 0)
            let asUser = try await harness.refusal { try await harness.notify(forged, as: .user(id.uuidString)) }
            #expect(asUser.code == .forbidden)
        }
    }
}

extension AccountsHarness {
    func notify(_ payload: String, as principal: Principal = AccountsHarness.gateway) async throws -> AccountsAppleNotification.Reply {
        try await accountsClient.call(AccountsAppleNotification.self, .init(payload: payload), principal: principal, timeout: .seconds(30))
    }

    func appleEmailDisabled(_ id: UUID) async throws -> Bool? {
        try await database.pool.withConnection { db in
            try db.query("SELECT apple_email_disabled FROM accounts.users WHERE id = $1", id).first?.decode(Bool.self, column: 0)
        }
    }

    func notificationRows() async throws -> Int {
        try await database.pool.withConnection { db in
            try db.query("SELECT count(*)::bigint FROM accounts.apple_notifications")[0].decode(Int.self, column: 0)
        }
    }
}
