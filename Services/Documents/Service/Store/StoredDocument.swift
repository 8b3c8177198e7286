import Bus
import Contracts
import Foundation
import Postgres

/// One `documents` row.
struct StoredDocument: Sendable, Equatable {
    var id: UUID
    var ownerId: UUID
    var type: DocumentType
    var title: String
    var description: String?
    var fileUrl: String
    var fileType: String?
    var version: Int
    var schoolId: String?
    var createdAt: Date
    var length: Int64
    var committed: Int64
    /// Where the bytes are: the large object (`postgres`) or the object (`s3`), per row.
    var location: ByteLocation
    var sha256: String?
    var state: BytesState
    var possiblyCorrupt: Bool
    /// When the last chunk was committed (creation, before the first).
    var updatedAt: Date
    /// The name the uploader gave (see ``FileURL/originalName(_:)``); nil for rows from before it was kept.
    var fileName: String? = nil
    /// The S3 multipart upload of an unfinished `s3` upload, once its first part went.
    var multipartUploadId: String? = nil

    /// The columns ``decode(_:)`` reads, in order. A complete document whose large object is gone
    /// reads as `missing` (seed 002: "File no longer available"), found by one index probe; an
    /// object gone from S3 is found when it is read (a probe per row would be a request per row).
    static let columns = """
        id, owner_id, type, title, description, file_url, file_type, version, school_id, created_at, length, committed, \
        lo_oid, sha256, \(stateExpression), possibly_corrupt, updated_at, file_name, storage, object_key, multipart_upload_id
        """

    /// The state as readers see it: `missing` for a complete document whose large object is gone.
    static let stateExpression = """
        CASE WHEN state = 'available' AND storage = 'postgres' \
        AND NOT EXISTS (SELECT 1 FROM pg_largeobject_metadata m WHERE m.oid = lo_oid::oid) THEN 'missing' ELSE state END
        """

    /// How many columns ``columns`` names (a query's next column is at this index).
    static let columnCount = 21

    static func decode(_ row: PostgresRow) throws -> StoredDocument {
        let (
            id, owner, type, title, description, fileUrl, fileType, version, school, createdAt, length, committed, oid, sha, state, corrupt, updated
        ) =
            try row.decode(
                UUID.self, UUID.self, String.self, String.self, String?.self, String.self, String?.self, Int.self, String?.self,
                Date.self, Int64.self, Int64.self, Int64?.self, String?.self, String.self, Bool.self, Date.self)
        let fileName = try row.decode(String?.self, column: 17)
        let (storage, key, uploadId) = (
            try row.decode(String.self, column: 18), try row.decode(String?.self, column: 19), try row.decode(String?.self, column: 20)
        )
        guard let type = DocumentType(rawValue: type), let state = BytesState(rawValue: state),
            let location = ByteLocation(storage: storage, largeObject: oid, objectKey: key)
        else {
            throw PostgresError(kind: .decoding, operation: "documents row", message: "unexpected type, state or byte location")
        }
        return StoredDocument(
            id: id, ownerId: owner, type: type, title: title, description: description, fileUrl: fileUrl, fileType: fileType,
            version: version, schoolId: school, createdAt: createdAt, length: length, committed: committed, location: location,
            sha256: sha, state: state, possiblyCorrupt: corrupt, updatedAt: updated, fileName: fileName, multipartUploadId: uploadId)
    }

    /// The document as replies carry it.
    var contract: Document {
        Document(
            id: id, ownerId: ownerId, type: type, title: title, description: description, fileUrl: fileUrl, fileType: fileType,
            version: version, schoolId: schoolId, createdAt: createdAt, length: length, committedBytes: committed, sha256: sha256,
            bytesState: state, possiblyCorrupt: possiblyCorrupt, fileName: fileName)
    }

    /// Where the upload stands; an unfinished one expires `expiry` after its last chunk.
    func uploadStatus(expiry: Duration) -> UploadStatus {
        let uploading = state == .uploading
        return UploadStatus(
            id: id, offset: committed, length: length, complete: !uploading, document: uploading ? nil : contract,
            expiresAt: uploading ? updatedAt.addingTimeInterval(expiry.inSeconds) : nil)
    }
}

/// Whose documents a request may touch: a user only their own (anyone else's is `not_found`,
/// never revealing it exists); operators and the services allowed to act for users any.
enum Access: Sendable, Equatable {
    case owner(UUID)
    case any

    /// The access of a caller by the bus's rule (``BusRequestContext/actingFor``), for by-id
    /// operations, which filter by owner rather than refuse.
    init(_ actingFor: ActingFor) {
        switch actingFor {
        case .user(let id): self = .owner(id)
        case .anyone: self = .any
        }
    }

    /// The owner to filter by, or nil for any.
    var ownerFilter: UUID? {
        if case .owner(let id) = self { return id }
        return nil
    }
}
