import Foundation
import Identity
import ServiceKit

/// The Accounts service's own settings. Every variable is read before any is judged, so
/// `--help-env` lists them all.
public struct AccountsSettings: EnvironmentSettings {
    /// The eligibility rules in force (the shipped file unless `ACCOUNTS_ELIGIBILITY_RULES` names one).
    public let rules: EligibilityRules
    /// How often deleted accounts whose Audit erasure failed are tried again.
    public let erasureSweepInterval: Duration
    /// The app's bundle id: the audience Apple identity tokens must name.
    public let appleBundleID: String
    /// Where Apple's public keys are read from (https URL or file).
    public let appleKeys: AppleKeySource
    /// Signs session tokens.
    public let sessionKeys: SessionKeySet
    /// How long a session lasts without sign-in (its refresh token's life).
    public let sessionLifetime: Duration

    public init(environment env: EnvironmentReader) throws {
        let path = env.string(
            "ACCOUNTS_ELIGIBILITY_RULES", default: "",
            "Path of a JSON eligibility rules file (version, minimumAge, jurisdictions, restrictedStates); empty: the shipped rules.")
        erasureSweepInterval = try env.duration(
            "ACCOUNTS_ERASURE_SWEEP_INTERVAL", default: .seconds(30),
            "How often deleted accounts whose Audit erasure has not succeeded yet are tried again.")
        let bundle = env.string(
            "ACCOUNTS_APPLE_BUNDLE_ID", default: "", "The app's bundle id, the audience of Apple identity tokens. Required.")
        let jwks = env.string(
            "ACCOUNTS_APPLE_JWKS", default: "https://appleid.apple.com/auth/keys",
            "Apple's public keys (JWKS): an https URL or a file path.")
        let seed = env.secret(
            "ACCOUNTS_SESSION_SIGNING_KEY", default: "",
            "Ed25519 key that signs session tokens: base64 of a 32-byte seed (`head -c 32 /dev/urandom | base64`), or `kid=<base64 seed>`. Required.")
        let keyID = env.string("ACCOUNTS_SESSION_KEY_ID", default: "s1", "The key id (`kid`) session tokens carry.")
        sessionLifetime = try env.duration(
            "ACCOUNTS_SESSION_LIFETIME", default: .seconds(30 * 24 * 3600), "How long a session (its refresh token) lasts.")

        rules = path.isEmpty ? try EligibilityRules.bundled() : try EligibilityRules.load(from: URL(fileURLWithPath: path))
        guard !bundle.isEmpty else { throw ConfigurationError.missing("ACCOUNTS_APPLE_BUNDLE_ID", expected: "the app's bundle id") }
        appleBundleID = bundle
        guard let keys = try? AppleKeySource(configuration: jwks) else {
            throw ConfigurationError(variable: "ACCOUNTS_APPLE_JWKS", value: jwks, expected: "an https URL or a file path")
        }
        appleKeys = keys
        guard !seed.revealed.isEmpty else {
            throw ConfigurationError.missing("ACCOUNTS_SESSION_SIGNING_KEY", expected: "base64 of a 32-byte Ed25519 seed")
        }
        // A bare base64 seed (kid from ACCOUNTS_SESSION_KEY_ID), or Identity's `kid=<base64 seed>` form.
        let plain = Data(base64Encoded: seed.revealed).flatMap { $0.count == 32 ? $0 : nil }
            .flatMap { try? SessionSigningKey(id: keyID, seed: $0) }.flatMap { try? SessionKeySet(current: $0) }
        guard let set = plain ?? (try? SessionKeySet(currentConfiguration: seed.revealed)) else {
            throw ConfigurationError(
                variable: "ACCOUNTS_SESSION_SIGNING_KEY", value: nil, expected: "base64 of a 32-byte Ed25519 seed (and a valid key id)")
        }
        sessionKeys = set
    }
}
