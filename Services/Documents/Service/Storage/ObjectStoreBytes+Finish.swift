import Bus
import Contracts
import Crypto
import Foundation
import Hex
import ObjectStorage
import Postgres

extension ObjectStoreBytes {
    /// The last chunk: the object is completed in S3 first, then the row committed `available`.
    /// A crash between leaves a complete object under an unfinished row: the client sends the last
    /// chunk again, which finds the upload already completed and accepts the object if it is the
    /// declared length and ends with these bytes (or the row expires and its object is removed).
    func finish(_ last: LastPart, offset: Int64, access: Access) async throws -> StoredDocument {
        var document = last.document
        let key = last.key
        if let uploadId = document.multipartUploadId {
            do {
                let etag = try await client.uploadPart(key: key, uploadId: uploadId, partNumber: last.parts.count + 1, bytes: last.bytes)
                try await client.completeMultipartUpload(
                    key: key, uploadId: uploadId, parts: last.parts + [S3CompletedPart(partNumber: last.parts.count + 1, etag: etag)])
            } catch let error as S3Error where error.reason == .noSuchUpload {
                try await acceptCompleted(key: key, length: document.length, endingWith: last.bytes, after: error)
            }
        } else {
            // Never reached a part: the whole file is staged, one PUT.
            try await client.putObject(key: key, bytes: last.bytes, contentType: document.fileType)
        }
        let sha256: String
        if let hash = last.hash { sha256 = Hex.string(hash.finalize()) } else { sha256 = try await rehash(key: key, length: document.length) }
        var pdfIncomplete = false
        if document.fileType == "application/pdf" {
            let tailLength = MagicNumbers.pdfTailLength
            let tail =
                last.bytes.count >= tailLength || Int64(last.bytes.count) == document.length
                ? Array(last.bytes.suffix(tailLength))
                : try await client.getObject(key: key, range: (document.length - Int64(tailLength))...(document.length - 1))
            pdfIncomplete = !MagicNumbers.looksComplete(pdfTail: tail)
        }
        let possiblyCorrupt = pdfIncomplete
        let (documents, staged, parts) = (self.documents, self.staged, self.parts)
        let id = document.id
        document = try await pool.withTransaction { db in
            var document = try DocumentsStore.locked(id, access, table: documents, on: db)
            guard document.state == .uploading, document.committed == offset, document.location == .object(key: key) else {
                throw BusError(.conflict, "the upload was finished by another request", details: ["offset": "\(document.committed)"])
            }
            document.updatedAt = try db.query(
                """
                UPDATE \(documents) SET committed = length, sha256 = $2, state = 'available', possibly_corrupt = $3,
                    multipart_upload_id = NULL, updated_at = clock_timestamp()
                WHERE id = $1 RETURNING updated_at
                """, id, sha256, possiblyCorrupt)[0].decode(Date.self, column: 0)
            try db.execute("DELETE FROM \(staged) WHERE document_id = $1", id)
            try db.execute("DELETE FROM \(parts) WHERE document_id = $1", id)
            (document.committed, document.sha256, document.state) = (document.length, sha256, .available)
            document.possiblyCorrupt = possiblyCorrupt
            document.multipartUploadId = nil
            return document
        }
        hashes.forget(id)
        return document
    }

    /// The multipart upload is gone: accepted only if an earlier try completed it with these bytes.
    private func acceptCompleted(key: String, length: Int64, endingWith bytes: [UInt8], after error: S3Error) async throws {
        guard let head = try await client.headObject(key: key), head.size == length, length >= Int64(bytes.count) else { throw error }
        let tail = bytes.isEmpty ? [] : try await client.getObject(key: key, range: (length - Int64(bytes.count))...(length - 1))
        guard tail == bytes else { throw error }
    }

    /// The SHA-256 of the complete object, read back in part-sized ranged GETs: what a restart costs
    /// (swift-crypto cannot save a hash state, and S3 cannot read parts before completion).
    func rehash(key: String, length: Int64) async throws -> String {
        var hash = Crypto.SHA256()
        var done: Int64 = 0
        while done < length {
            let end = min(done + Int64(partSize), length)
            let piece = try await client.getObject(key: key, range: done...(end - 1))
            guard piece.count == Int(end - done) else { throw BusError(.unavailable, "object storage returned a short range; try again") }
            hash.update(data: piece)
            done = end
        }
        return Hex.string(hash.finalize())
    }

    func read(_ document: StoredDocument, offset: Int64, length: Int) async throws -> Data {
        guard case .object(let key) = document.location else { throw AppendRules.moved(document.id) }
        let end = min(offset + Int64(length), document.length)
        guard end > offset else { return Data() }
        let bytes = try await Self.storeFailure { try await client.getObject(key: key, range: offset...(end - 1)) }
        // Fewer bytes than the range holds is a broken reply, never a short file served as whole.
        guard bytes.count == Int(end - offset) else { throw BusError(.unavailable, "object storage returned a short range; try again") }
        return Data(bytes)
    }

    func remove(_ document: StoredDocument, on db: isolated PostgresConnection) throws {
        guard case .object(let key) = document.location else { return }
        try db.execute("INSERT INTO \(removals) (object_key, multipart_upload_id) VALUES ($1, $2)", key, document.multipartUploadId)
    }

    /// S3's failures as the bus's: a missing object is `gone` (like a missing large object); the
    /// store unreachable, overloaded or refusing our credentials is `unavailable` (HTTP 503), a
    /// condition of the deployment that a later try may not meet.
    @discardableResult
    static func storeFailure<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let error as S3Error {
            switch error.reason {
            case .notFound: throw BusError(.gone, "File no longer available")
            case .invalidRange, .rejected, .malformedResponse, .noSuchUpload:
                throw BusError(.internal, "object storage refused the request: \(error.code ?? error.reason.rawValue)")
            default:
                throw BusError(.unavailable, "object storage is unavailable (\(error.operation): \(error.code ?? error.reason.rawValue)); try again")
            }
        }
    }
}
