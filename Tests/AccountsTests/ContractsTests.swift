import Bus
import Contracts
import Foundation
import Testing

/// The Accounts bus API as JSON: the member names the gateway maps to seed 004's fields.
struct AccountsContractsTests {
    @Test func userReplyCarriesRawAndDerivedFields() throws {
        let user = AccountUser(
            id: UUID(), appleId: "a", email: nil, name: "N", username: nil, state: "CA", eligibilityConfirmedAt: Date(),
            tosVersion: "1.0", tosAcceptedAt: Date(), createdAt: Date(), eligibilityRulesVersion: "r1",
            hasConfirmedEligibility: true, hasAcceptedTOS: true, needsToAcceptTOS: false)
        let object = try #require(JSONSerialization.jsonObject(with: try BusJSON.encode(user)) as? [String: Any])
        for key in [
            "id", "appleId", "name", "state", "eligibilityConfirmedAt", "tosVersion", "tosAcceptedAt", "createdAt",
            "eligibilityRulesVersion", "hasConfirmedEligibility", "hasAcceptedTOS", "needsToAcceptTOS",
        ] {
            #expect(object[key] != nil, "\(key)")
        }
        let decoded = try BusJSON.decode(AccountUser.self, from: try BusJSON.encode(user))
        #expect(decoded.id == user.id && decoded.state == "CA" && decoded.needsToAcceptTOS == false)
    }

    @Test func getOrCreateAcceptsTheAppsFirstCallWithoutComplianceFields() throws {
        let request = try BusJSON.decode(AccountsGetOrCreate.Request.self, from: Data(#"{"appleId":"001.abc","email":null,"name":"N"}"#.utf8))
        #expect(request.appleId == "001.abc" && request.state == nil && request.eligibilityCertified == nil && request.tosVersion == nil)
        #expect(AccountsGetOrCreate.type == "accounts.get_or_create" && AccountsRestrictedUsers.type == "accounts.restricted_users")
    }

    @Test func sessionMethodsHaveTheirNamesAndOptionalFields() throws {
        let request = try BusJSON.decode(AccountsSignInWithApple.Request.self, from: Data(#"{"identityToken":"t"}"#.utf8))
        #expect(request.identityToken == "t" && request.nonce == nil && request.email == nil && request.clientIP == nil)
        #expect(AccountsSignInWithApple.type == "accounts.sign_in_with_apple" && AccountsRefreshSession.type == "accounts.refresh_session")
        #expect(AccountsSignOut.type == "accounts.sign_out" && AccountsVerifySession.type == "accounts.verify_session")
        let pending = AccountsVerifySession.Reply(userId: nil, appleId: "a", sessionId: UUID(), expiresAt: Date())
        #expect(try BusJSON.decode(AccountsVerifySession.Reply.self, from: try BusJSON.encode(pending)).userId == nil)
    }

    @Test func appleAndCertificateMethodsHaveTheirNamesAndOptionalFields() throws {
        #expect(AccountsAppleNotification.type == "accounts.apple_notification" && AccountsPublicKeys.type == "accounts.public_keys")
        #expect(AccountsDeletionCertificate.type == "accounts.deletion_certificate")
        let signIn = try BusJSON.decode(AccountsSignInWithApple.Request.self, from: Data(#"{"identityToken":"t","authorizationCode":"c"}"#.utf8))
        #expect(signIn.authorizationCode == "c")
        let reply = try BusJSON.decode(
            AccountsConfirmDeletion.Reply.self, from: Data(#"{"userId":"\#(UUID().uuidString)","deletedAt":"2026-01-02T03:04:05.678Z"}"#.utf8))
        #expect(reply.certificate == nil)
        let item = try BusJSON.decode(DeletionItem.self, from: Data(#"{"category":"documents","description":"d"}"#.utf8))
        #expect(item.count == nil && item.bytes == nil)
    }
}
