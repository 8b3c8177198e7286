import Bus
import Contracts
import Crypto
import Foundation
import ObjectStorage
import Postgres

/// Bytes in an S3-compatible bucket (`DOCUMENTS_STORAGE=s3`): one object per document at
/// ``ByteLocation/objectKey(owner:id:)``, one S3 multipart upload per tus upload.
///
/// An acknowledged chunk must survive a crash, but S3 parts must be at least 5 MiB and chunks
/// are 1 MiB: each chunk is staged in `upload_staged_chunks` in the transaction that advances
/// `committed`; once the staged bytes reach the part size they go to S3 as the next part
/// (UploadPart) and the part's number and ETag are recorded in `upload_parts` in the transaction
/// that drops them from staging. A crash in between sends the same part number again (S3 keeps
/// the last): exactly once. The last chunk sends the last part, completes the upload, and only
/// then commits the row as `available` (see `+Finish`).
struct ObjectStoreBytes: DocumentBytes {
    let pool: PostgresPool
    let client: S3Client
    /// `<schema>.documents`, `.upload_staged_chunks`, `.upload_parts`, `.object_removals`.
    let documents: String
    let staged: String
    let parts: String
    let removals: String
    let hashes: RunningHashes
    let partSize: Int

    init(pool: PostgresPool, client: S3Client, schema: String, hashes: RunningHashes, partSize: Int) {
        self.pool = pool
        self.client = client
        self.documents = "\(schema).documents"
        self.staged = "\(schema).upload_staged_chunks"
        self.parts = "\(schema).upload_parts"
        self.removals = "\(schema).object_removals"
        self.hashes = hashes
        self.partSize = partSize
    }

    /// The staged chunks that make the next part, read under the document's lock.
    struct PendingPart: Sendable {
        var id: UUID
        var key: String
        var uploadId: String?
        var number: Int
        var offsets: [Int64]
        var bytes: [UInt8]
    }

    /// The last chunk's work, handed out of the transaction that checked it.
    struct LastPart: Sendable {
        var document: StoredDocument
        var key: String
        var parts: [S3CompletedPart]
        /// The staged bytes, then the last chunk: the last part (or the whole object).
        var bytes: [UInt8]
        /// The running hash through the last chunk; nil after a restart (recomputed from the object).
        var hash: Crypto.SHA256?
    }

    enum Step: Sendable {
        /// Staged bytes already make a part (its sending failed before): send it, then try again.
        case sendFirst(PendingPart)
        /// Committed; send `part` now if the chunk filled one.
        case staged(StoredDocument, Crypto.SHA256?, part: PendingPart?)
        case last(LastPart)
    }

    func append(_ id: UUID, offset: Int64, chunk: Data, access: Access) async throws -> StoredDocument {
        let bytes = [UInt8](unsafeUninitializedCapacity: chunk.count) { buffer, count in count = chunk.copyBytes(to: buffer) }
        for _ in 0..<2 {
            switch try await pool.withTransaction({ db in try self.stage(id, offset: offset, bytes, access: access, on: db) }) {
            case .sendFirst(let part):
                try await Self.storeFailure { try await send(part) }
            case .staged(let document, let hash, let part):
                if let hash { hashes.remember(hash, of: id, at: document.committed) } else { hashes.forget(id) }
                // The chunk is committed either way; a part that fails to go now is sent before the next chunk is taken.
                if let part { try? await send(part) }
                return document
            case .last(let last):
                return try await Self.storeFailure { try await finish(last, offset: offset, access: access) }
            }
        }
        throw BusError(.unavailable, "the staged part could not be sent to object storage; try again")
    }

    /// Under the row's lock: the checks, then the chunk staged and committed (or handed out, if last).
    private func stage(_ id: UUID, offset: Int64, _ chunk: [UInt8], access: Access, on db: isolated PostgresConnection) throws -> Step {
        var document = try DocumentsStore.locked(id, access, table: documents, on: db)
        let end = try AppendRules.check(document, offset: offset, count: chunk.count)
        guard case .object(let key) = document.location else { throw AppendRules.moved(id) }
        let stagedCount = try db.query("SELECT coalesce(sum(octet_length(bytes)), 0)::bigint FROM \(staged) WHERE document_id = $1", id)[0]
            .decode(Int64.self, column: 0)
        if stagedCount >= Int64(partSize) { return .sendFirst(try pendingPart(document, key: key, on: db)) }
        // The first 16 bytes are staged until the first part (5 MiB at least) goes.
        try AppendRules.checkType(document, offset: offset, end: end) { try stagedBytes(id, on: db) + chunk }
        var hash = hashes.state(of: id, at: offset)
        hash?.update(data: chunk)
        guard end == document.length else {
            try db.execute("INSERT INTO \(staged) (document_id, start_offset, bytes) VALUES ($1, $2, $3)", id, offset, chunk)
            document.updatedAt = try db.query(
                "UPDATE \(documents) SET committed = $2, updated_at = clock_timestamp() WHERE id = $1 RETURNING updated_at", id, end
            )[0].decode(Date.self, column: 0)
            document.committed = end
            let full = stagedCount + Int64(chunk.count) >= Int64(partSize)
            return .staged(document, hash, part: full ? try pendingPart(document, key: key, on: db) : nil)
        }
        let sent = try db.query("SELECT part_number, etag FROM \(parts) WHERE document_id = $1 ORDER BY part_number", id).map {
            let (number, etag) = try $0.decode(Int.self, String.self)
            return S3CompletedPart(partNumber: number, etag: etag)
        }
        return .last(LastPart(document: document, key: key, parts: sent, bytes: try stagedBytes(id, on: db) + chunk, hash: hash))
    }

    private func stagedBytes(_ id: UUID, on db: isolated PostgresConnection) throws -> [UInt8] {
        try db.query("SELECT bytes FROM \(staged) WHERE document_id = $1 ORDER BY start_offset", id).reduce(into: []) { bytes, row in
            bytes += try row.decode([UInt8].self, column: 0)
        }
    }

    private func pendingPart(_ document: StoredDocument, key: String, on db: isolated PostgresConnection) throws -> PendingPart {
        let rows = try db.query("SELECT start_offset, bytes FROM \(staged) WHERE document_id = $1 ORDER BY start_offset", document.id)
        var part = PendingPart(
            id: document.id, key: key, uploadId: document.multipartUploadId,
            number: try db.query("SELECT coalesce(max(part_number), 0) + 1 FROM \(parts) WHERE document_id = $1", document.id)[0]
                .decode(Int.self, column: 0), offsets: [], bytes: [])
        part.bytes.reserveCapacity(partSize + (1 << 20))
        for row in rows {
            let (start, bytes) = try row.decode(Int64.self, [UInt8].self)
            part.offsets.append(start)
            part.bytes += bytes
        }
        return part
    }

    /// Sends one part, then records it and drops its chunks from staging in one transaction. If
    /// another call sent the same part meanwhile (its chunks are gone), nothing more is recorded.
    private func send(_ part: PendingPart) async throws {
        var uploadId: String
        if let started = part.uploadId { uploadId = started } else { uploadId = try await startUpload(part.id, key: part.key) }
        let etag = try await client.uploadPart(key: part.key, uploadId: uploadId, partNumber: part.number, bytes: part.bytes)
        let (documents, staged, parts) = (self.documents, self.staged, self.parts)
        do {
            try await pool.withTransaction { db in try Self.record(part, etag: etag, documents: documents, staged: staged, parts: parts, on: db) }
        } catch is AlreadySent {}
    }

    private static func record(
        _ part: PendingPart, etag: String, documents: String, staged: String, parts: String, on db: isolated PostgresConnection
    ) throws {
        guard try !db.query("SELECT 1 FROM \(documents) WHERE id = $1 FOR UPDATE", part.id).isEmpty else { return }
        let list = "{" + part.offsets.map(String.init).joined(separator: ",") + "}"
        let dropped = try db.query(
            "DELETE FROM \(staged) WHERE document_id = $1 AND start_offset = ANY ($2::bigint[]) RETURNING 1", part.id, list
        ).count
        // Fewer than sent: another call sent this part meanwhile; roll back so its record stands.
        guard dropped == part.offsets.count else { throw AlreadySent() }
        try db.execute(
            "INSERT INTO \(parts) (document_id, part_number, start_offset, size, etag) VALUES ($1, $2, $3, $4, $5)",
            part.id, part.number, part.offsets[0], Int64(part.bytes.count), etag)
    }

    private struct AlreadySent: Error {}

    /// Starts the document's multipart upload and records its id; the first to record wins (the
    /// other is aborted). One started but never recorded (a crash) is aborted by the orphan sweep.
    private func startUpload(_ id: UUID, key: String) async throws -> String {
        let started = try await client.createMultipartUpload(key: key)
        let documents = self.documents
        let recorded = try await pool.withConnection { db in
            try db.query(
                "UPDATE \(documents) SET multipart_upload_id = coalesce(multipart_upload_id, $2) WHERE id = $1 RETURNING multipart_upload_id",
                id, started
            ).first?.decode(String.self, column: 0)
        }
        if recorded != started { try? await client.abortMultipartUpload(key: key, uploadId: started) }
        guard let recorded else { throw DocumentsStore.notFound(id) }
        return recorded
    }
}
