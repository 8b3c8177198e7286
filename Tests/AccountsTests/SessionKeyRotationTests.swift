import AppleStandIn
import Bus
import Contracts
import Crypto
import Foundation
import TestSupport
import Testing

/// `ACCOUNTS_SESSION_PREVIOUS_PUBLIC_KEYS`: tokens signed before a key rotation stay valid until
/// they expire while the old public key is listed, and not once it is dropped.
@Suite(.serialized) struct SessionKeyRotationTests {
    @Test func tokensOfAPreviousKeyVerifyWhileItIsListed() async throws {
        try await AccountsHarness.run { harness in
            let appleId = "apple.rotation-\(UUID().uuidString)"
            let id = try #require(try await harness.signUp(appleId: appleId).id)
            let before = try await harness.signIn(try AppleStandIn.token(subject: appleId))

            let oldPublic = try Curve25519.Signing.PrivateKey(rawRepresentation: try #require(Data(base64Encoded: AppleStandIn.sessionSeed)))
                .publicKey.rawRepresentation.base64EncodedString()
            let next = Curve25519.Signing.PrivateKey()
            let rotated = [
                "ACCOUNTS_SESSION_SIGNING_KEY": "s2=\(next.rawRepresentation.base64EncodedString())",
                "ACCOUNTS_SESSION_PREVIOUS_PUBLIC_KEYS": "s1=\(oldPublic)",
            ]
            try await harness.restartAccounts(rules: nil, extra: rotated)
            #expect(try await harness.verifySession(before.sessionToken).userId == id)
            let after = try await harness.signIn(try AppleStandIn.token(subject: appleId))
            #expect(try await harness.verifySession(after.sessionToken).userId == id)
            let keys = try await harness.accountsClient.call(AccountsPublicKeys.self, Empty(), principal: .anonymous)
            #expect(keys.sessionKeys.map(\.keyId) == ["s2", "s1"])

            // The old key dropped: its tokens are refused; the new key's still verify.
            try await harness.restartAccounts(rules: nil, extra: ["ACCOUNTS_SESSION_SIGNING_KEY": rotated["ACCOUNTS_SESSION_SIGNING_KEY"]!])
            #expect(try await harness.refusal { try await harness.verifySession(before.sessionToken) }.code == .unauthenticated)
            #expect(try await harness.verifySession(after.sessionToken).userId == id)
        }
    }
}
