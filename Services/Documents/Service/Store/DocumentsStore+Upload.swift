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
    /// Creates the row in one transaction, after checking the owner's quota under a per-owner lock
    /// (so two concurrent creates cannot both squeeze under it). Its bytes go where
    /// `DOCUMENTS_STORAGE` says: an empty large object made now, or an object key whose object the
    /// upload makes. A zero-length document is complete at once (in S3, its empty object is put
    /// first: no row ever points to a missing object).
    func create(_ new: NewDocument, quota: Int64) async throws -> StoredDocument {
        let (documents, kind) = (self.documents, newUploads)
        let id = UUID()
        let key = ByteLocation.objectKey(owner: new.ownerId, id: id)
        if new.length == 0, case .mismatch(let expected) = MagicNumbers.check(fileType: new.fileType, head: []) {
            throw BusError(.unsupportedMediaType, "an empty file is not \(expected)")
        }
        if kind == .s3, new.length == 0, let objects {
            try await ObjectStoreBytes.storeFailure { try await objects.client.putObject(key: key, bytes: [], contentType: new.fileType) }
        }
        do {
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
                let oid: Int64? = kind == .postgres ? Int64(try LargeObjectBytes.create(on: db)) : nil
                let complete = new.length == 0
                let insert = """
                    INSERT INTO \(documents) (id, owner_id, type, title, description, file_url, file_type, version, school_id, created_at,
                        length, committed, lo_oid, sha256, state, possibly_corrupt, updated_at, file_name, storage, object_key)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, date_trunc('milliseconds', clock_timestamp()), $10, 0, $11, $12, $13, $14,
                        clock_timestamp(), $15, $16, $17)
                    RETURNING \(StoredDocument.columns)
                    """
                let row = try db.query(
                    insert, id, new.ownerId, new.type.rawValue, new.title, new.description, FileURL.make(id: id, fileName: new.fileName),
                    new.fileType, new.version, new.schoolId, new.length, oid,
                    complete ? Hex.string(Crypto.SHA256.hash(data: [UInt8]())) : nil,
                    complete ? BytesState.available.rawValue : BytesState.uploading.rawValue,
                    complete && new.fileType == "application/pdf", FileURL.originalName(new.fileName), kind.rawValue,
                    kind == .s3 ? key : nil)
                return try StoredDocument.decode(row[0])
            }
        } catch {
            // Refused (quota): the empty object put above has no row; the orphan sweep would get it later.
            if kind == .s3, new.length == 0, let objects { try? await objects.client.deleteObject(key: key) }
            throw error
        }
    }

    /// Writes one chunk at `offset` and commits it before returning (see ``DocumentsAppend``), in
    /// the storage the row names.
    func append(_ id: UUID, offset: Int64, chunk: Data, access: Access) async throws -> UploadStatus {
        let document = try await bytes(at: location(of: id, access: access)).append(id, offset: offset, chunk: chunk, access: access)
        return document.uploadStatus(expiry: uploadExpiry)
    }

    /// Where `id`'s bytes are, to pick the implementation (which checks the row again under its
    /// lock). Without a bucket every row is in PostgreSQL: no query (the large object's id is then
    /// read by ``LargeObjectBytes`` itself).
    func location(of id: UUID, access: Access) async throws -> ByteLocation {
        guard objects != nil else { return .largeObject(0) }
        let documents = self.documents
        let sql = "SELECT storage, lo_oid, object_key FROM \(documents) WHERE id = $1 AND \(Self.ownerClause(2))"
        guard
            let row = try await pool.withConnection({ db in
                try db.query(sql, id, access.ownerFilter).first?.decode(String.self, Int64?.self, String?.self)
            })
        else { throw Self.notFound(id) }
        guard let location = ByteLocation(storage: row.0, largeObject: row.1, objectKey: row.2) else {
            throw BusError(.internal, "document \(id) has no valid byte location")
        }
        return location
    }

    /// Where an upload stands.
    func uploadStatus(_ id: UUID, access: Access) async throws -> UploadStatus {
        try await document(id: id, access: access).uploadStatus(expiry: uploadExpiry)
    }
}
