import Bus
import Contracts
import Crypto
import Foundation
import Hex
import Identity

/// How a deletion was asked for.
public enum DeletionTrigger: String, Sendable {
    /// The user requested and confirmed it in the app.
    case inApp = "in_app"
    /// Apple's `account-delete` server notification: the Apple ID itself is gone.
    case appleAccountDelete = "apple_account_delete"
}

/// What one deletion removed, counted inside its transaction: the certificate's content.
public struct DeletionFacts: Sendable {
    public var userId: UUID
    public var trigger: DeletionTrigger
    public var requestedAt: Date
    public var deletedAt: Date
    public var confirmations: Int
    public var sessions: Int
    /// Stored Apple refresh tokens (0 or 1): queued for revocation, or dropped.
    public var appleTokens: Int
    /// What became of the grant so far (`pending` when a token was queued for revocation).
    public var appleGrant: AppleGrantRevocation {
        switch (trigger, appleTokens) {
        case (.appleAccountDelete, _): AppleGrantRevocation(status: .endedByApple)
        case (.inApp, 0): AppleGrantRevocation(status: .noneStored)
        case (.inApp, _): AppleGrantRevocation(status: .pending)
        }
    }
    /// What Documents held, when it answered before the deletion; nil otherwise.
    public var documents: DocumentsUsage.Reply?
}

/// Makes and reads signed deletion certificates (``DeletionCertificate``): Ed25519 compact JWS
/// with the certificate keys (`ACCOUNTS_CERTIFICATE_SIGNING_KEY`, else the session key). The
/// claims name no person: the user id enters only as a salted SHA-256 digest.
public struct DeletionCertifier: Sendable {
    public static let issuer = "recruiting-compass/accounts"
    public let keys: SessionKeySet

    public init(keys: SessionKeySet) { self.keys = keys }

    /// The certificate of the deletion `facts` describe, with a fresh id and salt.
    public func certify(_ facts: DeletionFacts) throws -> DeletionCertificate {
        var salt = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices { salt[index] = generator.next() }
        let saltText = Base64URL.encode(Data(salt))
        let id = UUID()
        let documentsNote = "deleted by the documents service on account.deleted"
        let claims = DeletionCertificateClaims(
            certificateId: id, issuer: Self.issuer, trigger: facts.trigger.rawValue, requestedAt: facts.requestedAt,
            deletedAt: facts.deletedAt, subjectSalt: saltText, subjectDigest: Self.subjectDigest(userId: facts.userId, salt: saltText),
            deleted: [
                CertificateEntry(category: "profile", count: 1, note: "Apple ID link, email, name, username, state"),
                CertificateEntry(category: "eligibility_confirmations", count: facts.confirmations),
                CertificateEntry(category: "sessions", count: facts.sessions),
                CertificateEntry(category: "apple_tokens", count: facts.appleTokens, note: Self.appleNote(facts.appleGrant)),
                CertificateEntry(category: "documents", count: facts.documents?.documents, bytes: facts.documents?.bytes, note: documentsNote),
                CertificateEntry(category: "share_links", count: facts.documents?.shareLinks, note: documentsNote),
            ],
            kept: [
                CertificateEntry(
                    category: "consent_records",
                    note: "proof that terms or privacy versions were accepted or declined, kept as legal evidence; "
                        + "identity, IP address and device erased (pseudonymised)"),
                CertificateEntry(
                    category: "deletion_record", count: 1, note: "the account id and deletion time, to answer repeats; no personal data"),
            ],
            appleGrant: facts.appleGrant)
        return try sign(claims)
    }

    /// The same certificate (same id, salt and digest) re-signed with what became of the Apple grant.
    public func amend(_ certificate: DeletionCertificate, appleGrant: AppleGrantRevocation) throws -> DeletionCertificate {
        var claims = certificate.claims
        claims.appleGrant = appleGrant
        claims.deleted = claims.deleted.map { entry in
            guard entry.category == "apple_tokens" else { return entry }
            return CertificateEntry(category: entry.category, count: entry.count, bytes: entry.bytes, note: Self.appleNote(appleGrant))
        }
        return try sign(claims)
    }

    private func sign(_ claims: DeletionCertificateClaims) throws -> DeletionCertificate {
        let token = try Ed25519JWS.sign(payload: try BusJSON.encode(claims), type: DeletionCertificate.tokenType, key: keys.current)
        return DeletionCertificate(certificateId: claims.certificateId, token: token, claims: claims)
    }

    /// The `apple_tokens` line's note for a grant status.
    static func appleNote(_ grant: AppleGrantRevocation) -> String {
        switch grant.status {
        case .noneStored: "no Apple grant was held"
        case .pending: "queued for revocation at Apple (retried until it succeeds or the retries run out); the certificate is re-signed then"
        case .revoked: "revoked at Apple, then deleted"
        case .revocationFailed: "Apple could not be reached after \(grant.attempts) attempts: deleted without revocation"
        case .endedByApple: "the Apple ID was deleted at Apple: deleted, nothing to revoke"
        }
    }

    /// `SHA-256("recruiting-compass.deletion.v1:" + salt + ":" + lowercase user id)`, hex.
    public static func subjectDigest(userId: UUID, salt: String) -> String {
        let digest = SHA256.hash(data: Data("recruiting-compass.deletion.v1:\(salt):\(userId.uuidString.lowercased())".utf8))
        return Hex.string(digest)
    }

    /// A stored certificate (our own token: its payload is read, not re-verified).
    static func decode(_ token: String) throws -> DeletionCertificate {
        let jws = try CompactJWS(parsing: token, maximumLength: 64 * 1024)
        let claims = try BusJSON.decoder().decode(DeletionCertificateClaims.self, from: jws.payload)
        return DeletionCertificate(certificateId: claims.certificateId, token: token, claims: claims)
    }
}
