import AccountsService
import Crypto
import Foundation
import ServiceKit
import Testing

/// The settings added for Apple's token endpoints, certificates and key rotation: all-or-none,
/// loopback-only plain http, valid keys, and errors that never echo a secret.
struct AppleSettingsTests {
    static let base = ["ACCOUNTS_APPLE_BUNDLE_ID": "com.example.app", "ACCOUNTS_SESSION_SIGNING_KEY": SessionSettingsTests.seed]
    static let pem = P256.Signing.PrivateKey().pemRepresentation
    static let sealing = "t1=\(Data(repeating: 3, count: 32).base64EncodedString())"
    static let apple = [
        "ACCOUNTS_APPLE_TEAM_ID": "TEAM", "ACCOUNTS_APPLE_KEY_ID": "KEY", "ACCOUNTS_APPLE_PRIVATE_KEY": pem,
        "ACCOUNTS_APPLE_TOKEN_KEYS": sealing,
    ]

    static func settings(_ values: [String: String]) throws -> AccountsSettings {
        try AccountsSettings(environment: EnvironmentReader(base.merging(values) { $1 }))
    }

    @Test func appleTokenSettingsAreAllOrNone() throws {
        #expect(try Self.settings([:]).appleTokens == nil)
        let configured = try #require(try Self.settings(Self.apple).appleTokens)
        #expect(configured.client.baseURL.absoluteString == "https://appleid.apple.com" && configured.client.secret.teamID == "TEAM")
        for missing in Self.apple.keys {
            var partial = Self.apple
            partial[missing] = nil
            #expect(throws: ConfigurationError.self) { try Self.settings(partial) }
        }
    }

    @Test func badAppleValuesAreRefusedWithoutEchoingSecrets() throws {
        var plainHTTP = Self.apple
        plainHTTP["ACCOUNTS_APPLE_BASE_URL"] = "http://appleid.example.com"
        #expect(throws: ConfigurationError.self) { try Self.settings(plainHTTP) }
        plainHTTP["ACCOUNTS_APPLE_BASE_URL"] = "http://127.0.0.1:9"
        #expect(try Self.settings(plainHTTP).appleTokens != nil)
        var badKey = Self.apple
        badKey["ACCOUNTS_APPLE_PRIVATE_KEY"] = "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----"
        let keyError = #expect(throws: ConfigurationError.self) { try Self.settings(badKey) }
        #expect(!"\(String(describing: keyError))".contains("not a key"))
        var badSealing = Self.apple
        badSealing["ACCOUNTS_APPLE_TOKEN_KEYS"] = "t1=\(Data(repeating: 4, count: 16).base64EncodedString())"
        let sealingError = #expect(throws: ConfigurationError.self) { try Self.settings(badSealing) }
        #expect(!"\(String(describing: sealingError))".contains(Data(repeating: 4, count: 16).base64EncodedString()))
        #expect(throws: ConfigurationError.self) { try Self.settings(["ACCOUNTS_APPLE_REVOKE_BACKOFF": "1m,soon"]) }
        #expect(
            try Self.settings(["ACCOUNTS_APPLE_REVOKE_BACKOFF": "250ms, 2m,1h"]).appleRevokeBackoff
                == [.milliseconds(250), .seconds(120), .seconds(3600)])
    }

    @Test func previousKeysAndTheCertificateKey() throws {
        let previous = Curve25519.Signing.PrivateKey().publicKey.rawRepresentation.base64EncodedString()
        let rotated = try Self.settings(["ACCOUNTS_SESSION_PREVIOUS_PUBLIC_KEYS": "s0=\(previous)"])
        #expect(rotated.sessionKeys.previous.keys.sorted() == ["s0"])
        // Without a key of its own, certificates are signed by the session key.
        #expect(rotated.certificateKeys.current.id == "s1")
        #expect(throws: ConfigurationError.self) { try Self.settings(["ACCOUNTS_SESSION_PREVIOUS_PUBLIC_KEYS": "s1=\(previous)"]) }
        #expect(throws: ConfigurationError.self) { try Self.settings(["ACCOUNTS_SESSION_PREVIOUS_PUBLIC_KEYS": "s0=short"]) }
        let own = try Self.settings(["ACCOUNTS_CERTIFICATE_SIGNING_KEY": "c1=\(SessionSettingsTests.seed)"])
        #expect(own.certificateKeys.current.id == "c1")
        let seedError = #expect(throws: ConfigurationError.self) {
            try Self.settings(["ACCOUNTS_CERTIFICATE_SIGNING_KEY": "c1=\(Data(repeating: 5, count: 8).base64EncodedString())"])
        }
        #expect(!"\(String(describing: seedError))".contains(Data(repeating: 5, count: 8).base64EncodedString()))
        #expect(try Self.settings(["ACCOUNTS_DOCUMENTS_USAGE_TIMEOUT": "0"]).documentsUsageTimeout == nil)
        #expect(try Self.settings([:]).documentsUsageTimeout == .seconds(2))
    }
}
