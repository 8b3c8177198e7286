import Crypto
import Foundation
import ServiceKit

/// The Audit service's own settings.
public struct AuditSettings: EnvironmentSettings {
    /// Signs receipts and checkpoints.
    let signingKey: Curve25519.Signing.PrivateKey
    /// Keys used before a rotation, still accepted when verifying.
    let previousPublicKeys: [Curve25519.Signing.PublicKey]
    /// Concurrent batch writers, each with its own chain and connection.
    public let writers: Int
    /// The first chain this instance writes (it writes `chainOffset ..< chainOffset + writers`).
    public let chainOffset: Int
    /// The most records one transaction takes.
    public let maximumBatch: Int
    /// How often each chain's head is signed into a checkpoint.
    public let checkpointInterval: Duration
    /// How long a writer reuses a subject it read, so a batch of users seen lately is written in
    /// one statement (``SubjectCache``); zero reads every batch's subjects.
    public let subjectCacheLifetime: Duration

    /// Every variable is read before any is judged, so `--help-env` lists them all.
    public init(environment env: EnvironmentReader) throws {
        let seed = env.secret(
            "AUDIT_SIGNING_KEY", default: "",
            "Ed25519 private key that signs consent receipts and chain checkpoints: base64 of a 32-byte seed (`head -c 32 /dev/urandom | base64`). Required."
        )
        let previousKeys = env.list(
            "AUDIT_PREVIOUS_PUBLIC_KEYS", default: [],
            "Public keys (base64) of earlier signing keys, comma-separated: receipts they signed still verify.")
        writers = try env.int(
            "AUDIT_WRITERS", default: 4, in: 1...64, "Concurrent group-commit writers (one chain and one database connection each).")
        chainOffset = try env.int(
            "AUDIT_CHAIN_OFFSET", default: 0, in: 0...1_000_000,
            "First chain number this instance writes. Instances sharing a database should write disjoint chains (e.g. ordinal × AUDIT_WRITERS); overlapping ones stay correct but wait on each other's chain locks."
        )
        maximumBatch = try env.int("AUDIT_MAX_BATCH", default: 1000, in: 1...10_000, "The most records one group-commit transaction takes.")
        checkpointInterval = try env.duration(
            "AUDIT_CHECKPOINT_INTERVAL", default: .seconds(60), "How often each chain's head is signed into a checkpoint.")
        subjectCacheLifetime = try env.duration(
            "AUDIT_SUBJECT_CACHE_LIFETIME", default: .seconds(60),
            "How long a writer reuses a subject (pseudonym and HMAC secret) it read, so a batch of users seen lately is written in one statement; also how long an erased subject's secret can stay in the memory of an instance that did not erase it (a record is never written with one). 0 reads every batch's subjects."
        )

        guard !seed.revealed.isEmpty else {
            throw ConfigurationError.missing("AUDIT_SIGNING_KEY", expected: "base64 of a 32-byte Ed25519 seed")
        }
        guard let bytes = Data(base64Encoded: seed.revealed), bytes.count == 32,
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: bytes)
        else { throw ConfigurationError(variable: "AUDIT_SIGNING_KEY", value: nil, expected: "base64 of a 32-byte Ed25519 seed") }
        signingKey = key
        previousPublicKeys = try previousKeys.map { entry in
            guard let raw = Data(base64Encoded: entry), let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw) else {
                throw ConfigurationError(variable: "AUDIT_PREVIOUS_PUBLIC_KEYS", value: entry, expected: "base64 Ed25519 public keys")
            }
            return key
        }
    }
}
