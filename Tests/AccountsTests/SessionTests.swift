import AppleStandIn
import Bus
import Contracts
import Foundation
import TestSupport
import Testing

/// Sign in with Apple and sessions, against the real services with a stand-in for
/// Apple's keys.
@Suite(.serialized) struct SessionTests {
    @Test func anExistingUserSignsInRefreshesAndSignsOut() async throws {
        try await AccountsHarness.run { harness in
            let appleId = "001234.existing.0001"
            let id = try #require(try await harness.signUp(appleId: appleId).id)
            let signIn = try await harness.signIn(try AppleStandIn.token(subject: appleId))
            #expect(signIn.user.id == id && signIn.user.hasConfirmedEligibility)
            #expect(signIn.sessionExpiresAt > Date())
            let verified = try await harness.verifySession(signIn.sessionToken)
            #expect(verified.userId == id && verified.sessionId == signIn.sessionId && verified.appleId == appleId)

            // Rotation: the new pair works, the old refresh token is refused from now on.
            let refreshed = try await harness.refreshSession(signIn.refreshToken)
            #expect(refreshed.sessionId == signIn.sessionId && refreshed.refreshToken != signIn.refreshToken)
            #expect(try await harness.verifySession(refreshed.sessionToken).userId == id)
            #expect(try await harness.refusal { try await harness.refreshSession(signIn.refreshToken) }.code == .unauthenticated)

            // Sign-out revokes: the session token and the refresh token stop working.
            let out = try await harness.accountsClient.call(
                AccountsSignOut.self, .init(refreshToken: refreshed.refreshToken), principal: AccountsHarness.gateway)
            #expect(out.sessionId == signIn.sessionId)
            #expect(try await harness.refusal { try await harness.verifySession(refreshed.sessionToken) }.code == .unauthenticated)
            #expect(try await harness.refusal { try await harness.refreshSession(refreshed.refreshToken) }.code == .unauthenticated)
            // Another user cannot end someone's session by id.
            let second = try await harness.signIn(try AppleStandIn.token(subject: appleId))
            let forbidden = try await harness.refusal {
                try await harness.accountsClient.call(
                    AccountsSignOut.self, .init(sessionId: second.sessionId), principal: .user(UUID().uuidString))
            }
            #expect(forbidden.code == .forbidden)
            _ = try await harness.accountsClient.call(AccountsSignOut.self, .init(sessionId: second.sessionId), principal: .user(id.uuidString))
            #expect(try await harness.refusal { try await harness.verifySession(second.sessionToken) }.code == .unauthenticated)
        }
    }

    @Test func aNewAppleIdGetsAnUnconfirmedUserThenTheAccountAndDeletionEndsTheSession() async throws {
        try await AccountsHarness.run { harness in
            let appleId = "001234.newcomer.0002"
            let signIn = try await harness.signIn(try AppleStandIn.token(subject: appleId), email: "new@example.com")
            #expect(signIn.user.id == nil && !signIn.user.hasConfirmedEligibility && signIn.user.appleId == appleId)
            #expect(signIn.user.email == "new@example.com")
            #expect(try await harness.userCount() == 0)
            let pending = try await harness.verifySession(signIn.sessionToken)
            #expect(pending.userId == nil && pending.appleId == appleId)

            // get_or_create with eligibility creates the account; the open session now belongs to it.
            let id = try #require(try await harness.signUp(appleId: appleId).id)
            #expect(try await harness.verifySession(signIn.sessionToken).userId == id)
            // A sign-in that raced the sign-up (its row missed the binding) is bound when verified.
            try await harness.database.pool.withConnection { db in
                _ = try db.execute("UPDATE accounts.sessions SET user_id = NULL WHERE apple_id = $1", appleId)
            }
            #expect(try await harness.verifySession(signIn.sessionToken).userId == id)
            let refreshed = try await harness.refreshSession(signIn.refreshToken)
            #expect(try await harness.verifySession(refreshed.sessionToken).userId == id)

            let preview = try await harness.accountsClient.call(AccountsDeletionPreview.self, .init(userId: id), principal: .user(id.uuidString))
            #expect(preview.deleted.first { $0.category == "sessions" }?.count == 1)
            let request = try await harness.requestDeletion(id)
            _ = try await harness.confirmDeletion(id, request.requestId)
            #expect(try await harness.refusal { try await harness.verifySession(refreshed.sessionToken) }.code == .unauthenticated)
            #expect(try await harness.refusal { try await harness.refreshSession(refreshed.refreshToken) }.code == .unauthenticated)
            #expect(try await harness.sessionRows() == 0)
        }
    }

    @Test func refusedAppleTokensAreUnauthenticatedAndWriteNothing() async throws {
        try await AccountsHarness.run { harness in
            let subject = "001234.refused.0003"
            let cases: [(String, String, String)] = try [
                ("bad signature", AppleStandIn.token(subject: subject, signer: AppleStandIn.otherKey), "signature"),
                ("wrong audience", AppleStandIn.token(subject: subject, audience: "com.example.other"), "not meant for this app"),
                ("expired", AppleStandIn.token(subject: subject, issuedAt: Date().addingTimeInterval(-7200)), "expired"),
                ("wrong issuer", AppleStandIn.token(subject: subject, issuer: "https://evil.example.com"), "issuer"),
                ("malformed", "not.a-token", "malformed"),
            ]
            for (name, token, reason) in cases {
                let error = try await harness.refusal { try await harness.signIn(token) }
                #expect(error.code == .unauthenticated, "\(name)")
                #expect(error.message.contains(reason), "\(name): \(error.message)")
            }
            let nonce = try await harness.refusal {
                try await harness.accountsClient.call(
                    AccountsSignInWithApple.self, .init(identityToken: try AppleStandIn.token(subject: subject), nonce: "raw-nonce"),
                    principal: AccountsHarness.gateway)
            }
            #expect(nonce.code == .unauthenticated && nonce.message.contains("nonce"))
            #expect(try await harness.sessionRows() == 0)
            #expect(try await harness.userCount() == 0)
            let forged = try await harness.refusal { try await harness.verifySession("e30.e30.AAAA") }
            #expect(forged.code == .unauthenticated)
            let user = try await harness.refusal {
                try await harness.accountsClient.call(
                    AccountsSignInWithApple.self, .init(identityToken: try AppleStandIn.token(subject: subject)), principal: .user(UUID().uuidString))
            }
            #expect(user.code == .forbidden)
        }
    }
}

/// The account id given out before the account exists, and sign-out scopes (what Supabase Auth
/// clients rely on), against the real services.
@Suite(.serialized) struct SessionAccountIdTests {
    @Test func theIdGivenAtSignInIsTheAccountsAndScopesEndTheRightSessions() async throws {
        try await AccountsHarness.run { harness in
            let appleId = "001234.supabase.0003"
            let first = try await harness.signIn(try AppleStandIn.token(subject: appleId))
            let reserved = try #require(first.accountId)
            #expect(first.user.id == nil && reserved != UUID(uuidString: "00000000-0000-0000-0000-000000000000"))
            // Every open session of the Apple id names the same id, and so do refresh and verify.
            let second = try await harness.signIn(try AppleStandIn.token(subject: appleId))
            #expect(second.accountId == reserved)
            let refreshed = try await harness.refreshSession(first.refreshToken)
            #expect(refreshed.accountId == reserved && refreshed.userId == nil && refreshed.appleId == appleId)
            #expect(try await harness.verifySession(second.sessionToken).accountId == reserved)
            // Another Apple id gets another id.
            #expect(try await harness.signIn(try AppleStandIn.token(subject: appleId + ".other")).accountId != reserved)

            // The account is created with it.
            #expect(try await harness.signUp(appleId: appleId).id == reserved)
            let third = try await harness.signIn(try AppleStandIn.token(subject: appleId))
            #expect(third.accountId == reserved && third.user.id == reserved)

            // others: every session but the named one ends, each announced.
            let others = try await harness.accountsClient.call(
                AccountsSignOut.self, .init(sessionId: third.sessionId, scope: .others), principal: AccountsHarness.gateway)
            #expect(others.revokedAt == nil && Set(others.ended?.map(\.sessionId) ?? []) == [first.sessionId, second.sessionId])
            #expect(try await harness.verifySession(third.sessionToken).userId == reserved)
            #expect(try await harness.refusal { try await harness.verifySession(second.sessionToken) }.code == .unauthenticated)
            // global: the rest, the named one included; a signed-out session cannot speak for others.
            let fourth = try await harness.signIn(try AppleStandIn.token(subject: appleId))
            let global = try await harness.accountsClient.call(
                AccountsSignOut.self, .init(sessionId: third.sessionId, scope: .global), principal: AccountsHarness.gateway)
            #expect(global.revokedAt != nil && Set(global.ended?.map(\.sessionId) ?? []) == [third.sessionId, fourth.sessionId])
            let again = try await harness.refusal {
                try await harness.accountsClient.call(
                    AccountsSignOut.self, .init(sessionId: third.sessionId, scope: .global), principal: AccountsHarness.gateway)
            }
            #expect(again.code == .unauthenticated)
        }
    }
}
