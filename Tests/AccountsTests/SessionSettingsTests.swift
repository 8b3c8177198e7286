import AccountsService
import Foundation
import ServiceKit
import Testing

/// The sign-in settings: required values, both key forms, and errors that never echo the key.
struct SessionSettingsTests {
    static let seed = Data(repeating: 7, count: 32).base64EncodedString()

    static func settings(_ values: [String: String]) throws -> AccountsSettings {
        try AccountsSettings(environment: EnvironmentReader(values))
    }

    @Test func readsTheBundleIDKeysAndSigningKey() throws {
        let plain = try Self.settings([
            "ACCOUNTS_APPLE_BUNDLE_ID": "com.example.app", "ACCOUNTS_SESSION_SIGNING_KEY": Self.seed,
            "ACCOUNTS_APPLE_JWKS": "/tmp/keys.json",
        ])
        #expect(plain.appleBundleID == "com.example.app" && plain.sessionKeys.current.id == "s1")
        #expect(plain.appleKeys == .file(path: "/tmp/keys.json"))
        let named = try Self.settings(["ACCOUNTS_APPLE_BUNDLE_ID": "com.example.app", "ACCOUNTS_SESSION_SIGNING_KEY": "k2=\(Self.seed)"])
        #expect(named.sessionKeys.current.id == "k2" && named.appleKeys == .apple)
    }

    @Test func missingOrBadValuesStopTheServiceWithoutEchoingTheKey() throws {
        #expect(throws: ConfigurationError.self) { try Self.settings(["ACCOUNTS_SESSION_SIGNING_KEY": Self.seed]) }
        #expect(throws: ConfigurationError.self) { try Self.settings(["ACCOUNTS_APPLE_BUNDLE_ID": "com.example.app"]) }
        let secret = Data(repeating: 9, count: 31).base64EncodedString()
        let error = #expect(throws: ConfigurationError.self) {
            try Self.settings(["ACCOUNTS_APPLE_BUNDLE_ID": "com.example.app", "ACCOUNTS_SESSION_SIGNING_KEY": secret])
        }
        #expect(!"\(String(describing: error))".contains(secret))
        #expect(throws: ConfigurationError.self) {
            try Self.settings(["ACCOUNTS_APPLE_BUNDLE_ID": "a", "ACCOUNTS_SESSION_SIGNING_KEY": Self.seed, "ACCOUNTS_APPLE_JWKS": "http://x/keys"])
        }
    }
}
