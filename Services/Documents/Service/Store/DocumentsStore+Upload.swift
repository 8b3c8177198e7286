import Bus
import Contracts
import Crypto
import Foundation
import Hex
import Postgres

/// A document about to be created: validated metadata and its declared length.
struct NewDocument: Sendable {
    var ownerId: UUID
    var type: DocumentType
    var title: String
    var description: String?
    var fileType: String?
    var schoolId: String?
    var fileName: String?
    var version: Int
    var length: Int64
}

extension DocumentsStore {
    /// Creates the row and its empty large object in one transaction, after checking the owner's
    /// quota under a per-owner lock (so two concurrent creates cannot both squeeze under it).
    /// A zero-length document is complete at once.
    func create(_ new: NewDocument, quota: Int64) async throws -> StoredDocument {
        let documents = self.documents
        let id = UUID()
        return try await pool.withTransaction { db in
            try db.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 5553))", "documents.quota." + new.ownerId.uuidString)
            let used = try db.query(
                "SELECT coalesce(sum(length), 0)::bigint FROM \(documents) WHERE owner_id = $1 AND state <> 'missing'", new.ownerId
            )[0].decode(Int64.self, column: 0)
            guard used + new.length <= quota else {
                throw BusError(
                    .payloadTooLarge, "the document would exceed the storage quota",
                    details: ["quota": "\(quota)", "used": "\(used)", "length": "\(new.length)"])
            }
            let oid = try db.createLargeObject()
            if new.length == 0, case .mismatch(let expected) = MagicNumbers.check(fileType: new.fileType, head: []) {
                throw BusError(.unsupportedMediaType, "an empty file is not \(expected)")
            }
            let complete = new.length == 0
            let insert = """
                INSERT INTO \(documents) (id, owner_id, type, title, description, file_url, file_type, version, school_id, created_at,
                    length, committed, lo_oid, sha256, state, possibly_corrupt, updated_at, file_name)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, date_trunc('milliseconds', clock_timestamp()), $10, 0, $11, $12, $13, $14,
                    clock_timestamp(), $15)
                RETURNING \(StoredDocument.columns)
                """
            let row = try db.query(
                insert, id, new.ownerId, new.type.rawValue, new.title, new.description, FileURL.make(id: id, fileName: new.fileName),
                new.fileType, new.version, new.schoolId, new.length, Int64(oid),
                complete ? Hex.string(Crypto.SHA256.hash(data: [UInt8]())) : nil,
                complete ? BytesState.available.rawValue : BytesState.uploading.rawValue,
                complete && new.fileType == "application/pdf", FileURL.originalName(new.fileName))
            return try StoredDocument.decode(row[0])
        }
    }

    /// Writes one chunk at `offset` and commits it before returning (see ``DocumentsAppend``).
    func append(_ id: UUID, offset: Int64, chunk: Data, access: Access) async throws -> UploadStatus {
        let (documents, hashes, chunkSize) = (self.documents, self.hashes, self.chunkSize)
        let (document, hash) = try await pool.withTransaction { db -> (StoredDocument, Crypto.SHA256?) in
            var document = try Self.locked(id, access, table: documents, on: db)
            guard document.state == .uploading else {
                throw BusError(.conflict, "the upload is already complete", details: ["offset": "\(document.committed)"])
            }
            guard offset == document.committed else {
                throw BusError(
                    .conflict, "the chunk starts at \(offset) but \(document.committed) bytes are committed",
                    details: ["offset": "\(document.committed)"])
            }
            let end = offset + Int64(chunk.count)
            guard end <= document.length else {
                throw BusError(.invalidArgument, "the chunk runs past the declared length \(document.length)", details: ["offset": "\(offset)"])
            }
            let object = try db.openLargeObject(document.largeObject, mode: .readWrite)
            var hash = try hashes.state(of: id, at: offset) ?? Self.rehash(object, upTo: offset, chunkSize: chunkSize)
            // One memory copy (libpq's writer takes an array); a generic `[UInt8](chunk)` walks the bytes.
            let bytes = [UInt8](unsafeUninitializedCapacity: chunk.count) { buffer, count in count = chunk.copyBytes(to: buffer) }
            try object.seek(to: offset)
            guard try object.write(bytes) == bytes.count else { throw BusError(.internal, "short write to the large object") }
            hash.update(data: bytes)

            let headEnd = min(Int64(MagicNumbers.headerLength), document.length)
            if offset < headEnd, end >= headEnd {
                try object.seek(to: 0)
                let head = try object.read(upTo: Int(headEnd))
                if case .mismatch(let expected) = MagicNumbers.check(fileType: document.fileType, head: head) {
                    throw BusError(
                        .unsupportedMediaType,
                        "declared \(document.fileType ?? "-") but the bytes are not \(expected)")
                }
            }
            document.committed = end
            guard end == document.length else {
                document.updatedAt = try db.query(
                    "UPDATE \(documents) SET committed = $2, updated_at = clock_timestamp() WHERE id = $1 RETURNING updated_at", id, end
                )[0].decode(Date.self, column: 0)
                return (document, hash)
            }
            document.sha256 = Hex.string(hash.finalize())
            document.state = .available
            if document.fileType == "application/pdf" {
                try object.seek(to: max(0, end - Int64(MagicNumbers.pdfTailLength)))
                document.possiblyCorrupt = !MagicNumbers.looksComplete(pdfTail: try object.read(upTo: MagicNumbers.pdfTailLength))
            }
            try db.execute(
                """
                UPDATE \(documents) SET committed = $2, sha256 = $3, state = 'available', possibly_corrupt = $4, updated_at = clock_timestamp()
                WHERE id = $1
                """,
                id, end, document.sha256, document.possiblyCorrupt)
            return (document, nil)
        }
        if let hash { hashes.remember(hash, of: id, at: document.committed) } else { hashes.forget(id) }
        return document.uploadStatus(expiry: uploadExpiry)
    }

    /// Where an upload stands.
    func uploadStatus(_ id: UUID, access: Access) async throws -> UploadStatus {
        try await document(id: id, access: access).uploadStatus(expiry: uploadExpiry)
    }

    /// The hash state after the first `end` stored bytes, read back a chunk at a time.
    static func rehash(_ object: LargeObject, upTo end: Int64, chunkSize: Int) throws -> Crypto.SHA256 {
        var hash = Crypto.SHA256()
        try object.seek(to: 0)
        var done: Int64 = 0
        while done < end {
            let piece = try object.read(upTo: Int(min(Int64(chunkSize), end - done)))
            guard !piece.isEmpty else { throw BusError(.internal, "stored bytes end before the committed offset") }
            hash.update(data: piece)
            done += Int64(piece.count)
        }
        return hash
    }
}
