import AppleStandIn
import Bus
import Contracts
import Foundation
import TestSupport
import Testing

/// What a gateway that verifies tokens itself learns from Accounts: declining the terms ends every
/// open session of the user, sign-out ends one, each announced as `session.revoked`, and `accounts.session_revocations` lists both with the
/// outbox sequence they are complete up to.
@Suite(.serialized) struct SessionRevocationTests {
    @Test func decliningEndsEverySessionAndSaysSo() async throws {
        try await AccountsHarness.run { harness in
            let appleId = "apple." + UUID().uuidString
            let user = try #require(try await harness.signUp(appleId: appleId).id)
            let first = try await harness.signIn(try AppleStandIn.token(subject: appleId))
            let second = try await harness.signIn(try AppleStandIn.token(subject: appleId))
            let other = try await harness.signIn(try AppleStandIn.token(subject: "apple." + UUID().uuidString))
            #expect(try await harness.verifySession(first.sessionToken).userId == user)

            _ = try await harness.decline(user, try await harness.currentTerms())
            for grant in [first, second] {
                let verify = try await harness.refusal { try await harness.verifySession(grant.sessionToken) }
                #expect(verify.code == .unauthenticated)
                let refresh = try await harness.refusal { try await harness.refreshSession(grant.refreshToken) }
                #expect(refresh.code == .unauthenticated)
            }
            // Someone else's session is untouched.
            #expect(try await harness.verifySession(other.sessionToken).appleId != appleId)
            // The revocations a gateway loads at start name both sessions.
            let list = try await harness.accountsClient.call(
                AccountsSessionRevocations.self, .init(since: Date().addingTimeInterval(-60)), principal: AccountsHarness.gateway)
            #expect(Set(list.sessions.map(\.sessionId)).isSuperset(of: [first.sessionId, second.sessionId]))
            #expect(!list.sessions.contains { $0.sessionId == other.sessionId })
            #expect(list.tokenLifetimeSeconds > 0)
            // And the outbox carries the event a running gateway follows, within that sequence.
            let events = try await harness.database.pool.withConnection { db in
                try db.query("SELECT payload::text FROM accounts.outbox WHERE type = $1", SessionEvents.revoked).map {
                    try $0.decode(String.self, column: 0)
                }
            }
            for grant in [first, second] {
                #expect(events.filter { $0.lowercased().contains(grant.sessionId.uuidString.lowercased()) }.count == 1)
            }
            // Signing in again works: declining ended the sessions that were open, not the account.
            let third = try await harness.signIn(try AppleStandIn.token(subject: appleId))
            #expect(try await harness.verifySession(third.sessionToken).userId == user)
            // A user principal may not read the list.
            let asUser = try await harness.refusal {
                try await harness.accountsClient.call(
                    AccountsSessionRevocations.self, .init(since: Date()), principal: .user(user.uuidString.lowercased()))
            }
            #expect(asUser.code == .forbidden)
        }
    }

    @Test func signOutIsAnnouncedOnce() async throws {
        try await AccountsHarness.run { harness in
            let appleId = "apple." + UUID().uuidString
            _ = try await harness.signUp(appleId: appleId)
            let grant = try await harness.signIn(try AppleStandIn.token(subject: appleId))
            for _ in 0..<2 {
                _ = try await harness.accountsClient.call(AccountsSignOut.self, .init(sessionId: grant.sessionId), principal: AccountsHarness.gateway)
            }
            let count = try await harness.database.pool.withConnection { db in
                try db.query("SELECT count(*)::bigint FROM accounts.outbox WHERE type = $1", SessionEvents.revoked)[0].decode(Int.self, column: 0)
            }
            #expect(count == 1)
        }
    }
}
