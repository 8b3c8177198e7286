import BusCore
import Foundation

/// One line of a deletion certificate: a kind of data and how much of it.
public struct CertificateEntry: Codable, Sendable, Equatable {
    /// The same keys as ``DeletionItem/category``.
    public var category: String
    /// How many; nil when it could not be gathered.
    public var count: Int?
    /// Stored bytes, for documents; nil when unknown or not applicable.
    public var bytes: Int64?
    /// Who carries it out, or why it stays.
    public var note: String?
    public init(category: String, count: Int? = nil, bytes: Int64? = nil, note: String? = nil) {
        self.category = category
        self.count = count
        self.bytes = bytes
        self.note = note
    }
}

/// What became of the user's Sign in with Apple grant (the refresh token Apple issued to the app).
public enum AppleGrantStatus: String, Codable, Sendable, Equatable {
    /// No grant was held: the app never handed over an authorization code.
    case noneStored = "none_stored"
    /// Queued for revocation at Apple, retried with backoff; the certificate is re-signed once it settles.
    case pending
    /// Apple confirmed the revocation.
    case revoked
    /// Apple could not be reached after every retry: the token was deleted without being revoked.
    case revocationFailed = "revocation_failed"
    /// The Apple ID itself was deleted (Apple's `account-delete` notification): nothing left to revoke.
    case endedByApple = "ended_by_apple"
}

/// The Apple grant's line in a deletion certificate.
public struct AppleGrantRevocation: Codable, Sendable, Equatable {
    public var status: AppleGrantStatus
    /// Revocation attempts made so far.
    public var attempts: Int
    /// When the status was reached (revoked or given up); nil while pending.
    public var settledAt: Date?
    public init(status: AppleGrantStatus, attempts: Int = 0, settledAt: Date? = nil) {
        self.status = status
        self.attempts = attempts
        self.settledAt = settledAt
    }
}

/// What a deletion certificate states. It holds no personal data: no e-mail, name, Apple id or
/// user id. `subjectDigest` is SHA-256 (hex) of `"recruiting-compass.deletion.v1:" + subjectSalt +
/// ":" + the lowercase user id`: the person, who knows their user id, can show the certificate is
/// theirs; nobody else can link it to anyone.
public struct DeletionCertificateClaims: Codable, Sendable, Equatable {
    public var certificateId: UUID
    /// `recruiting-compass/accounts`.
    public var issuer: String
    /// `in_app` (the user confirmed a deletion request) or `apple_account_delete` (Apple's notification).
    public var trigger: String
    public var requestedAt: Date
    public var deletedAt: Date
    /// Random, base64url (16 bytes).
    public var subjectSalt: String
    public var subjectDigest: String
    public var deleted: [CertificateEntry]
    /// What stays, pseudonymised, and why.
    public var kept: [CertificateEntry]
    /// Whether Apple's grant was revoked. While `pending`, Accounts re-signs the certificate (same
    /// id) when the revocation settles: read it again with `accounts.deletion_certificate`. Nil in
    /// certificates issued before this was recorded.
    public var appleGrant: AppleGrantRevocation?

    public init(
        certificateId: UUID, issuer: String, trigger: String, requestedAt: Date, deletedAt: Date, subjectSalt: String,
        subjectDigest: String, deleted: [CertificateEntry], kept: [CertificateEntry], appleGrant: AppleGrantRevocation? = nil
    ) {
        self.appleGrant = appleGrant
        self.certificateId = certificateId
        self.issuer = issuer
        self.trigger = trigger
        self.requestedAt = requestedAt
        self.deletedAt = deletedAt
        self.subjectSalt = subjectSalt
        self.subjectDigest = subjectDigest
        self.deleted = deleted
        self.kept = kept
    }
}

/// A signed deletion certificate. `token` is a compact JWS (`alg` EdDSA, `typ`
/// ``DeletionCertificate/tokenType``, `kid` one of `accounts.public_keys`' certificate keys) whose
/// payload is ``claims`` as JSON: verify it offline with the public key, then read the payload.
public struct DeletionCertificate: Codable, Sendable, Equatable {
    public static let tokenType = "deletion-certificate+jwt"
    public var certificateId: UUID
    public var token: String
    /// The token's payload, decoded (for convenience; the token is what is signed).
    public var claims: DeletionCertificateClaims
    public init(certificateId: UUID, token: String, claims: DeletionCertificateClaims) {
        self.certificateId = certificateId
        self.token = token
        self.claims = claims
    }
}

/// `accounts.deletion_certificate`: a certificate by id, for anyone who holds the id (it names
/// no one). `not_found` for an unknown id.
public enum AccountsDeletionCertificate: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var certificateId: UUID
        public init(certificateId: UUID) { self.certificateId = certificateId }
    }
    public typealias Reply = DeletionCertificate
    public static let type = "accounts.deletion_certificate"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// An Ed25519 public key and the id tokens name it by.
public struct NamedPublicKey: Codable, Sendable, Equatable {
    public var keyId: String
    /// `Ed25519`.
    public var algorithm: String
    /// Base64 of the 32-byte raw public key.
    public var publicKey: String
    public init(keyId: String, algorithm: String = "Ed25519", publicKey: String) {
        self.keyId = keyId
        self.algorithm = algorithm
        self.publicKey = publicKey
    }
}

/// `accounts.public_keys`: the keys that verify session tokens and deletion certificates, current
/// first then previous ones still accepted. For anyone.
public enum AccountsPublicKeys: RPCMethod {
    public typealias Request = Empty
    public struct Reply: Codable, Sendable, Equatable {
        public var sessionKeys: [NamedPublicKey]
        public var certificateKeys: [NamedPublicKey]
        public init(sessionKeys: [NamedPublicKey], certificateKeys: [NamedPublicKey]) {
            self.sessionKeys = sessionKeys
            self.certificateKeys = certificateKeys
        }
    }
    public static let type = "accounts.public_keys"
    public static let isIdempotent = true
    public static let cachesReply = false
}
