import Foundation
import Identity
import ServiceKit

/// Sign in with Apple's token endpoints: where they are, the client secret's signing key, and the
/// key that seals the refresh tokens at rest. All of team id, key id, private key and encryption
/// keys, or none (then authorization codes are not exchanged, and nothing needs revoking).
public struct AppleTokenSettings: Sendable {
    public let client: AppleTokenClient
    public let box: SecretBox

    /// Nil when none of the Apple token settings is given.
    init?(environment env: EnvironmentReader, bundleID: String) throws {
        let base = env.string(
            "ACCOUNTS_APPLE_BASE_URL", default: "https://appleid.apple.com",
            "Base URL of Apple's token endpoints (`/auth/token`, `/auth/revoke`); https, or http to a loopback address (tests).")
        let team = env.string("ACCOUNTS_APPLE_TEAM_ID", default: "", "Apple developer team id: the client secret's issuer.")
        let keyID = env.string("ACCOUNTS_APPLE_KEY_ID", default: "", "Id of the Sign in with Apple private key (the client secret's kid).")
        let pem = env.secret("ACCOUNTS_APPLE_PRIVATE_KEY", default: "", "The Sign in with Apple private key, PEM (the .p8 file's text).")
        let pemFile = env.string(
            "ACCOUNTS_APPLE_PRIVATE_KEY_FILE", default: "", "Path of the .p8 private key file (instead of ACCOUNTS_APPLE_PRIVATE_KEY).")
        let sealing = env.secret(
            "ACCOUNTS_APPLE_TOKEN_KEYS", default: "",
            "AES-256 keys that seal Apple refresh tokens at rest, `kid=<base64 32 bytes>` comma-separated, current first.")
        let timeout = try env.duration("ACCOUNTS_APPLE_TIMEOUT", default: .seconds(10), "How long one call to Apple's token endpoints may take.")

        let given = [team, keyID, pem.revealed, pemFile, sealing.revealed].filter { !$0.isEmpty }
        guard !given.isEmpty else { return nil }
        guard !team.isEmpty, !keyID.isEmpty, !(pem.revealed.isEmpty && pemFile.isEmpty), !sealing.revealed.isEmpty else {
            throw ConfigurationError.missing(
                "ACCOUNTS_APPLE_TEAM_ID, ACCOUNTS_APPLE_KEY_ID, ACCOUNTS_APPLE_PRIVATE_KEY(_FILE), ACCOUNTS_APPLE_TOKEN_KEYS",
                expected: "all of them, or none")
        }
        guard let url = URL(string: base), let host = url.host,
            url.scheme == "https" || (url.scheme == "http" && ["127.0.0.1", "localhost", "::1"].contains(host))
        else {
            throw ConfigurationError(variable: "ACCOUNTS_APPLE_BASE_URL", value: base, expected: "an https URL (http only to a loopback address)")
        }
        let keyText: String
        if pem.revealed.isEmpty {
            guard let data = FileManager.default.contents(atPath: pemFile) else {
                throw ConfigurationError(variable: "ACCOUNTS_APPLE_PRIVATE_KEY_FILE", value: pemFile, expected: "a readable .p8 file")
            }
            keyText = String(decoding: data, as: UTF8.self)
        } else {
            keyText = pem.revealed
        }
        guard let secret = try? AppleClientSecret(teamID: team, keyID: keyID, clientID: bundleID, privateKeyPEM: keyText) else {
            throw ConfigurationError(variable: "ACCOUNTS_APPLE_PRIVATE_KEY", value: nil, expected: "a P-256 private key in PEM (Apple's .p8)")
        }
        guard let ring = try? EncryptionKeyRing(configuration: sealing.revealed) else {
            throw ConfigurationError(variable: "ACCOUNTS_APPLE_TOKEN_KEYS", value: nil, expected: "kid=<base64 of 32 bytes> pairs, comma-separated")
        }
        client = AppleTokenClient(
            baseURL: url, secret: secret, timeout: Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        box = SecretBox(keys: ring)
    }
}
