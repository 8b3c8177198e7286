import Contracts
import Foundation

/// `manifest.json` of a data export: everything held about the user as data, and the list of
/// files in the archive with their sizes and SHA-256. Written last, so it says exactly which
/// document bytes made it into the archive.
package struct ExportManifest: Encodable, Sendable {
    static let format = "recruiting-compass-export/1"

    struct Consents: Encodable, Sendable {
        /// Ed25519 public key (base64 of the raw 32 bytes) the receipts' signatures verify with.
        var publicKey: String
        var signatureAlgorithm = "Ed25519"
        /// How to rebuild the signed text of a receipt (see README.txt in the archive).
        var signedText =
            "the receipt's fields joined by newlines: recruiting-compass-receipt-v1, recordId (lower case), documentType, version, digest, action, recordedAt (RFC 3339, milliseconds, UTC), chain, position, hash"
        /// Every accept, acknowledge and decline, newest first, each with its signed receipt.
        var records: [AcceptanceRecord]
    }

    struct ExportedDocument: Encodable, Sendable {
        var document: Document
        /// The path of the bytes in the archive; nil when they are not in it.
        var file: String?
        /// Why the bytes are not in the archive (still uploading, no longer stored, deleted meanwhile).
        var bytesNotIncluded: String?
    }

    struct File: Encodable, Sendable {
        var path: String
        var bytes: Int64
        /// Lower-case hex SHA-256 (for documents, the digest Documents stored at upload).
        var sha256: String
    }

    var format = Self.format
    var generatedAt: Date
    var userId: UUID
    var profile: AccountUser
    var eligibilityConfirmations: [EligibilityConfirmation]
    var profileCorrections: [ProfileCorrection]
    /// Sessions (metadata only: no token or token hash is ever exported).
    var sessions: [SessionSummary]
    var appleRefreshTokenHeld: Bool
    var appleEmailDisabled: Bool
    var consents: Consents
    var documents: [ExportedDocument]
    var shareLinks: [ShareLink]
    var files: [File]
}
