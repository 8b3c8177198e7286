import BusCore
import Foundation

/// The proof a user keeps that a record was written: what was agreed to, when, and where the
/// record sits in its hash chain. `audit.verify_receipt` checks one against the store.
///
/// `hash` is the record's chained hash (hex SHA-256 over its fields and the previous hash);
/// `signature` is the service's Ed25519 signature (base64) over ``signedText``, so a receipt can
/// be checked offline with the service's public key (`audit.public_key`).
public struct ConsentReceipt: Codable, Sendable, Equatable {
    public var recordId: UUID
    public var documentType: LegalDocumentType
    public var version: String
    /// The document's content digest the user agreed to.
    public var digest: String
    public var action: AcceptanceAction
    public var recordedAt: Date
    public var chain: Int
    public var position: Int64
    public var hash: String
    public var signature: String

    public init(
        recordId: UUID, documentType: LegalDocumentType, version: String, digest: String,
        action: AcceptanceAction, recordedAt: Date, chain: Int, position: Int64, hash: String,
        signature: String
    ) {
        self.recordId = recordId
        self.documentType = documentType
        self.version = version
        self.digest = digest
        self.action = action
        self.recordedAt = recordedAt
        self.chain = chain
        self.position = position
        self.hash = hash
        self.signature = signature
    }

    /// The exact text the signature covers: every field but the signature, one per line.
    public var signedText: String {
        [
            "recruiting-compass-receipt-v1", MessageID.text(of: recordId), documentType.rawValue, version, digest,
            action.rawValue, Timestamp.format(recordedAt), String(chain), String(position), hash,
        ].joined(separator: "\n")
    }
}
