import Bus
import Contracts
import Crypto
import Foundation
import Hummingbird

/// Writes a data export as a ZIP (``ZipStream``) straight into the response: `README.txt`, each
/// document's bytes under `documents/<id>/<name>`, then `manifest.json`. Document bytes are
/// read one chunk at a time with `documents.read`, as downloads are (``DocumentBytes``), and each
/// chunk is written before the next is asked for, so the gateway holds about one chunk whatever
/// the documents' sizes, and a slow client slows the reads down.
///
/// A document whose bytes are gone (or that was deleted) by the time it is read is left out and
/// the manifest says why; any other failure mid-stream ends the connection, so the client is left
/// with an archive that has no central directory, which no unpacker takes for complete.
package struct ExportArchive: Sendable {
    let contents: ExportContents
    let user: UUID
    let generatedAt: Date
    let services: ServiceClients
    let chunkSize: Int
    let traceparent: String

    func write(to writer: inout any ResponseBodyWriter) async throws {
        var zip = ZipStream(modified: generatedAt)
        var files: [ExportManifest.File] = []
        let readme = Array(Self.readme.utf8)
        try await writer.write(ByteBuffer(bytes: zip.begin("README.txt", size: UInt64(readme.count)) + readme + zip.end(crc: CRC32.of(readme))))
        files.append(.init(path: "README.txt", bytes: Int64(readme.count), sha256: Self.hex(SHA256.hash(data: readme))))
        var documents: [ExportManifest.ExportedDocument] = []
        for document in contents.documents {
            switch document.bytesState {
            case .uploading:
                documents.append(.init(document: document, file: nil, bytesNotIncluded: "the upload was not finished"))
            case .missing:
                documents.append(.init(document: document, file: nil, bytesNotIncluded: "the stored bytes are no longer available"))
            case .available:
                let path = ExportContents.path(of: document)
                if let reason = try await copy(document, as: path, zip: &zip, to: &writer) {
                    documents.append(.init(document: document, file: nil, bytesNotIncluded: reason))
                } else {
                    documents.append(.init(document: document, file: path, bytesNotIncluded: nil))
                    files.append(.init(path: path, bytes: document.length, sha256: document.sha256 ?? ""))
                }
            }
        }
        let manifest = ExportManifest(
            generatedAt: generatedAt, userId: user, profile: contents.account.user,
            eligibilityConfirmations: contents.account.eligibilityConfirmations, profileCorrections: contents.account.profileCorrections,
            sessions: contents.account.sessions, appleRefreshTokenHeld: contents.account.appleRefreshTokenHeld,
            appleEmailDisabled: contents.account.appleEmailDisabled,
            consents: .init(publicKey: contents.publicKey, records: contents.records), documents: documents,
            shareLinks: contents.shareLinks, files: files)
        let encoder = BusJSON.encoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let json = Array(try encoder.encode(manifest))
        try await writer.write(
            ByteBuffer(bytes: zip.begin("manifest.json", size: UInt64(json.count)) + json + zip.end(crc: CRC32.of(json)) + zip.finish()))
        try await writer.finish(nil)
    }

    /// Streams one document's bytes as an entry; the reason it was left out when it is gone before
    /// its first byte was read.
    private func copy(_ document: Document, as path: String, zip: inout ZipStream, to writer: inout any ResponseBodyWriter) async throws -> String? {
        let principal = Credential.principal(for: user)
        var offset: Int64 = 0
        var crc = CRC32()
        var started = false
        while offset < document.length || !started {
            let want = Int(min(Int64(chunkSize), max(document.length - offset, 0)))
            var chunk = Data()
            if want > 0 {
                do {
                    let (reply, attachments) = try await services.callWithAttachments(
                        .documents, DocumentsRead.self, .init(id: document.id, offset: offset, length: want), principal: principal,
                        traceparent: traceparent)
                    guard let bytes = attachments.first, reply.count > 0, bytes.count == reply.count, reply.totalLength == document.length
                    else { throw BusError(.internal, "Documents returned no bytes at offset \(offset) of \(document.id)") }
                    chunk = bytes
                } catch let error as BusError where !started && (error.code == .gone || error.code == .notFound) {
                    return error.code == .gone ? "the stored bytes are no longer available" : "the document was deleted while the export was made"
                }
            }
            if !started {
                try await writer.write(ByteBuffer(bytes: zip.begin(path, size: UInt64(document.length))))
                started = true
            }
            crc.update(chunk)
            if !chunk.isEmpty { try await writer.write(ByteBuffer(bytes: chunk)) }
            offset += Int64(chunk.count)
            if want == 0 { break }
        }
        try await writer.write(ByteBuffer(bytes: zip.end(crc: crc.value)))
        return nil
    }

    static func hex(_ digest: SHA256.Digest) -> String { digest.map { String(format: "%02x", $0) }.joined() }

    /// What the archive holds and how to check it, for the person who opens it.
    static let readme = """
        Recruiting Compass: your data
        =============================

        This archive holds everything the Recruiting Compass service keeps about your account at
        the time it was made.

        manifest.json
          profile                   your account as stored (name, email, state, terms version...)
          eligibilityConfirmations  each time your state and eligibility were confirmed
          profileCorrections        each correction you made (which fields, when, from where)
          sessions                  your sign-in sessions (when opened, when they end, whether
                                    ended); no token is ever exported
          appleRefreshTokenHeld     whether we hold a Sign in with Apple token (revoked when you
                                    delete your account); the token itself is not exported
          consents.records          every acceptance, acknowledgement or refusal of the terms
                                    and the privacy policy, with its signed receipt
          documents                 your documents' details, and where their bytes are in this
                                    archive (or why they are not)
          shareLinks                the share links you made and every use of them (links'
                                    secrets are not stored, only a hash, so they are not here)
          files                     every file in this archive with its size and SHA-256

        documents/<id>/<name>
          the bytes of each document, exactly as uploaded; their SHA-256 is in manifest.json.

        Checking the receipts offline
          Each receipt carries an Ed25519 signature (base64) made by the service. Rebuild the
          signed text: the lines
            recruiting-compass-receipt-v1
            recordId (lower case), documentType, version, digest, action,
            recordedAt (as written in the receipt), chain, position, hash
          joined with a newline (no newline at the end), and check the signature against
          consents.publicKey (base64 of the raw 32-byte Ed25519 public key), e.g. with
          OpenSSL or any Ed25519 library. Online, POST a receipt to /api/receipts/verify to have
          it checked against the audit trail as well; operators check the whole trail with
          `compass audit verify`.

        """
}
