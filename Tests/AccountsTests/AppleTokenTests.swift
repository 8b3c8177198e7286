import AppleStandIn
import Bus
import Contracts
import Foundation
import TestSupport
import Testing

/// The authorization-code exchange and the revocation on deletion, against a stand-in for
/// Apple's token endpoints on 127.0.0.1.
@Suite(.serialized) struct AppleTokenTests {
    @Test func theCodeIsExchangedAndTheRefreshTokenStoredSealed() async throws {
        let apple = try AppleTokenStandIn()
        defer { apple.stop() }
        try await AccountsHarness.run(extra: apple.environment) { harness in
            let appleId = "apple.exchange-\(UUID().uuidString)"
            _ = try await harness.signUp(appleId: appleId)
            let reply = try await harness.signIn(try AppleStandIn.token(subject: appleId), code: "code-1")
            #expect(reply.appleTokenStored == true)
            #expect(apple.exchanges == ["code-1"] && apple.problems.isEmpty)
            let sealed = try await harness.sealedAppleTokens(appleId: appleId)
            #expect(sealed.count == 1)
            #expect(sealed.allSatisfy { $0.hasPrefix("v1.t1.") && !$0.contains(AppleTokenStandIn.refreshToken(for: "code-1")) })
            // A later sign-in replaces it.
            _ = try await harness.signIn(try AppleStandIn.token(subject: appleId), code: "code-2")
            #expect(try await harness.sealedAppleTokens(appleId: appleId).count == 1)
        }
    }

    @Test func aFailedExchangeDoesNotFailTheSignIn() async throws {
        let apple = try AppleTokenStandIn()
        defer { apple.stop() }
        try await AccountsHarness.run(extra: apple.environment) { harness in
            let appleId = "apple.refused-\(UUID().uuidString)"
            let user = try #require(try await harness.signUp(appleId: appleId).id)
            let refused = try await harness.signIn(try AppleStandIn.token(subject: appleId), code: AppleTokenStandIn.refusedCode)
            #expect(refused.appleTokenStored == false && refused.user.id == user)
            #expect(try await harness.verifySession(refused.sessionToken).userId == user)
            #expect(try await harness.sealedAppleTokens(appleId: appleId).isEmpty)
            // Apple unreachable: the same.
            apple.stop()
            let unreachable = try await harness.signIn(try AppleStandIn.token(subject: appleId), code: "code-3")
            #expect(unreachable.appleTokenStored == false)
            // Without a code nothing is attempted.
            #expect(try await harness.signIn(try AppleStandIn.token(subject: appleId)).appleTokenStored == nil)
        }
    }

    @Test func deletionRevokesTheTokenRetryingAfterAFailure() async throws {
        let apple = try AppleTokenStandIn()
        defer { apple.stop() }
        try await AccountsHarness.run(extra: apple.environment) { harness in
            let appleId = "apple.revoke-\(UUID().uuidString)"
            let id = try #require(try await harness.signUp(appleId: appleId).id)
            #expect(try await harness.signIn(try AppleStandIn.token(subject: appleId), code: "code-9").appleTokenStored == true)
            apple.failNextRevocations(2)
            let request = try await harness.requestDeletion(id)
            let started = ContinuousClock.now
            _ = try await harness.confirmDeletion(id, request.requestId)
            // The deletion did not wait for Apple (whose first answers are failures).
            #expect(try await harness.refusal { try await harness.get(id) }.code == .gone)
            try await withTimeout(.seconds(20), "revocation at the stand-in") {
                while apple.revoked.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(apple.revoked == [AppleTokenStandIn.refreshToken(for: "code-9")])
            #expect(apple.revokeAttempts == 3 && apple.problems.isEmpty)
            #expect(ContinuousClock.now - started >= .milliseconds(300))
            try await withTimeout(.seconds(10), "sealed token removed") {
                while try await harness.appleTokenRows() > 0 { try await Task.sleep(for: .milliseconds(50)) }
            }
        }
    }

    @Test func revocationIsGivenUpAfterTheLastRetryAndTheTokenRemoved() async throws {
        let apple = try AppleTokenStandIn()
        defer { apple.stop() }
        try await AccountsHarness.run(extra: apple.environment) { harness in
            let appleId = "apple.give-up-\(UUID().uuidString)"
            let id = try #require(try await harness.signUp(appleId: appleId).id)
            #expect(try await harness.signIn(try AppleStandIn.token(subject: appleId), code: "code-7").appleTokenStored == true)
            apple.failNextRevocations(100)
            let request = try await harness.requestDeletion(id)
            _ = try await harness.confirmDeletion(id, request.requestId)
            try await withTimeout(.seconds(20), "revocation given up") {
                while try await harness.appleTokenRows() > 0 { try await Task.sleep(for: .milliseconds(50)) }
            }
            // The first attempt and one per wait of the three-step backoff table.
            #expect(apple.revokeAttempts == 4 && apple.revoked.isEmpty)
        }
    }
}

extension AccountsHarness {
    func signIn(_ token: String, code: String?) async throws -> AccountsSignInWithApple.Reply {
        try await accountsClient.call(
            AccountsSignInWithApple.self, .init(identityToken: token, authorizationCode: code), principal: Self.gateway, timeout: .seconds(30))
    }

    /// The sealed Apple tokens stored for `appleId`.
    func sealedAppleTokens(appleId: String) async throws -> [String] {
        try await database.pool.withConnection { db in
            try db.query("SELECT sealed_refresh_token FROM accounts.apple_tokens WHERE apple_id = $1", appleId).map {
                try $0.decode(String.self, column: 0)
            }
        }
    }

    func appleTokenRows() async throws -> Int {
        try await database.pool.withConnection { db in
            try db.query("SELECT count(*)::bigint FROM accounts.apple_tokens")[0].decode(Int.self, column: 0)
        }
    }
}

/// Rotating the seal key of Apple refresh tokens (`ACCOUNTS_APPLE_TOKEN_KEYS`): the new key first
/// and the old after it, a restart, and every stored token is resealed with the new key; then the
/// old key removed, and a deletion still opens the token and revokes it at Apple.
@Suite(.serialized) struct AppleTokenSealRotationTests {
    @Test func aRotationResealsEveryTokenAndTheOldKeyCanGo() async throws {
        let apple = try AppleTokenStandIn()
        defer { apple.stop() }
        // Read once: each read of the stand-in's environment makes a new seal key.
        let environment = apple.environment
        let oldKeys = try #require(environment["ACCOUNTS_APPLE_TOKEN_KEYS"])
        let newKey = "t2=\(Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString())"
        try await AccountsHarness.run(extra: environment) { harness in
            var users: [(id: UUID, appleId: String, code: String)] = []
            for index in 0..<3 {
                let appleId = "apple.rotate-\(index)-\(UUID().uuidString)"
                let id = try #require(try await harness.signUp(appleId: appleId).id)
                #expect(try await harness.signIn(try AppleStandIn.token(subject: appleId), code: "rotate-\(index)").appleTokenStored == true)
                users.append((id, appleId, "rotate-\(index)"))
            }
            #expect(try await harness.sealedAppleTokens().allSatisfy { $0.hasPrefix("v1.t1.") })

            // The new key first, the old one kept: the sweep at start reseals every token.
            var rotated = environment
            rotated["ACCOUNTS_APPLE_TOKEN_KEYS"] = "\(newKey),\(oldKeys)"
            try await harness.restartAccounts(rules: nil, extra: rotated)
            try await withTimeout(.seconds(20), "every token resealed with t2") {
                while try await !harness.sealedAppleTokens().allSatisfy({ $0.hasPrefix("v1.t2.") }) {
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            #expect(try await harness.sealedAppleTokens().count == users.count)

            // The old key gone: a deletion opens the resealed token and revokes it.
            rotated["ACCOUNTS_APPLE_TOKEN_KEYS"] = newKey
            try await harness.restartAccounts(rules: nil, extra: rotated)
            let deleted = users[0]
            let request = try await harness.requestDeletion(deleted.id)
            _ = try await harness.confirmDeletion(deleted.id, request.requestId)
            try await withTimeout(.seconds(20), "revocation at the stand-in") {
                while apple.revoked.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(apple.revoked == [AppleTokenStandIn.refreshToken(for: deleted.code)])
            #expect(apple.problems.isEmpty)
        }
    }
}

extension AccountsHarness {
    /// Every sealed Apple token stored.
    func sealedAppleTokens() async throws -> [String] {
        try await database.pool.withConnection { db in
            try db.query("SELECT sealed_refresh_token FROM accounts.apple_tokens").map { try $0.decode(String.self, column: 0) }
        }
    }
}
