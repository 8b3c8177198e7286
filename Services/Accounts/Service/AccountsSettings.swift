import Crypto
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
    /// Signs deletion certificates (its own key, or the session key when none is configured).
    public let certificateKeys: SessionKeySet
    /// How long the deletion preview waits for Documents' counts; nil: Documents is not asked.
    public let documentsUsageTimeout: Duration?
    /// Apple's token endpoints and the stored-token encryption; nil when not configured.
    public let appleTokens: AppleTokenSettings?
    /// Waits between attempts to revoke a deleted account's Apple token; given up after the last.
    public let appleRevokeBackoff: [Duration]
    /// How often due Apple token revocations are looked for.
    public let appleRevokeSweepInterval: Duration
    /// The consent stream's backpressure and receipts (``ConsentBacklog``, ``ChainWait``).
    public let consents: ConsentSettings

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
        let previousSessionKeys = env.string(
            "ACCOUNTS_SESSION_PREVIOUS_PUBLIC_KEYS", default: "",
            "Public keys of earlier session signing keys, `kid=<base64 Ed25519 public key>` comma-separated: their tokens stay valid until they expire."
        )
        let certificateSeed = env.secret(
            "ACCOUNTS_CERTIFICATE_SIGNING_KEY", default: "",
            "Ed25519 key that signs deletion certificates, `kid=<base64 32-byte seed>`; empty: the session signing key signs them.")
        let previousCertificateKeys = env.string(
            "ACCOUNTS_CERTIFICATE_PREVIOUS_PUBLIC_KEYS", default: "",
            "Public keys of earlier certificate keys, `kid=<base64 public key>` comma-separated, still listed by accounts.public_keys.")
        consents = try ConsentSettings(environment: env)
        let documentsTimeout = try env.duration(
            "ACCOUNTS_DOCUMENTS_USAGE_TIMEOUT", default: .seconds(2),
            "How long the deletion preview waits for the documents service's counts (0: do not ask it; counts are then unknown).")
        let apple = try AppleTokenSettings(environment: env, bundleID: bundle)
        let backoff = env.list(
            "ACCOUNTS_APPLE_REVOKE_BACKOFF", default: ["1m", "5m", "30m", "2h", "12h"],
            "Waits between attempts to revoke a deleted account's Apple token, comma-separated durations; given up after the last.")
        appleRevokeSweepInterval = try env.duration(
            "ACCOUNTS_APPLE_REVOKE_SWEEP_INTERVAL", default: .seconds(30), "How often due Apple token revocations are looked for.")

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
        let current = Data(base64Encoded: seed.revealed).map { $0.count == 32 ? "\(keyID)=\(seed.revealed)" : seed.revealed } ?? seed.revealed
        guard (try? SessionKeySet(currentConfiguration: current)) != nil else {
            throw ConfigurationError(
                variable: "ACCOUNTS_SESSION_SIGNING_KEY", value: nil, expected: "base64 of a 32-byte Ed25519 seed (and a valid key id)")
        }
        guard let set = try? SessionKeySet(currentConfiguration: current, previousConfiguration: previousSessionKeys) else {
            throw ConfigurationError(
                variable: "ACCOUNTS_SESSION_PREVIOUS_PUBLIC_KEYS", value: previousSessionKeys,
                expected: "kid=<base64 32-byte Ed25519 public key> pairs, ids distinct from the current key's")
        }
        sessionKeys = set
        if certificateSeed.revealed.isEmpty {
            certificateKeys = try Self.withPrevious(set.current, previousCertificateKeys)
        } else {
            guard let own = try? SessionKeySet(currentConfiguration: certificateSeed.revealed) else {
                throw ConfigurationError(variable: "ACCOUNTS_CERTIFICATE_SIGNING_KEY", value: nil, expected: "kid=<base64 32-byte Ed25519 seed>")
            }
            certificateKeys = try Self.withPrevious(own.current, previousCertificateKeys)
        }
        documentsUsageTimeout = documentsTimeout == .zero ? nil : documentsTimeout
        appleTokens = apple
        appleRevokeBackoff = try backoff.map { item in
            guard let duration = Self.parseDuration(item) else {
                throw ConfigurationError(variable: "ACCOUNTS_APPLE_REVOKE_BACKOFF", value: item, expected: "durations such as 30s, 5m, 2h")
            }
            return duration
        }
    }
}

extension AccountsSettings {
    static func withPrevious(_ key: SessionSigningKey, _ previous: String) throws -> SessionKeySet {
        var keys: [String: Curve25519.Signing.PublicKey] = [:]
        for item in previous.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }).filter({ !$0.isEmpty }) {
            guard let equals = item.firstIndex(of: "="), let bytes = Data(base64Encoded: String(item[item.index(after: equals)...])),
                let publicKey = try? Curve25519.Signing.PublicKey(rawRepresentation: bytes), keys[String(item[..<equals])] == nil
            else {
                throw ConfigurationError(
                    variable: "ACCOUNTS_CERTIFICATE_PREVIOUS_PUBLIC_KEYS", value: item, expected: "kid=<base64 32-byte Ed25519 public key>")
            }
            keys[String(item[..<equals])] = publicKey
        }
        guard let set = try? SessionKeySet(current: key, previous: keys) else {
            throw ConfigurationError(
                variable: "ACCOUNTS_CERTIFICATE_PREVIOUS_PUBLIC_KEYS", value: previous, expected: "key ids distinct from the current key's")
        }
        return set
    }

    /// `250ms`, `30s`, `5m`, `2h` (ServiceKit's duration form; a bare number is seconds).
    static func parseDuration(_ text: String) -> Duration? {
        let units: [(suffix: String, milliseconds: Double)] = [("ms", 1), ("h", 3_600_000), ("m", 60_000), ("s", 1000)]
        let unit = units.first { text.lowercased().hasSuffix($0.suffix) }
        guard let value = Double(text.dropLast(unit?.suffix.count ?? 0).trimmingCharacters(in: .whitespaces)), value.isFinite, value >= 0
        else { return nil }
        return .milliseconds(Int64((value * (unit?.milliseconds ?? 1000)).rounded()))
    }
}
