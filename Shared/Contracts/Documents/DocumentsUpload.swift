import BusCore
import Foundation

/// `documents.create`: the metadata and the declared length and file type; the bytes follow
/// through `documents.append` (tus: creation). `payload_too_large` beyond the maximum file size
/// or the owner's quota; `invalid_argument` for bad metadata.
public enum DocumentsCreate: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var ownerId: UUID
        public var type: DocumentType
        public var title: String
        public var description: String?
        /// A MIME type (`video/mp4`); checked against the bytes' magic number where we know it.
        public var fileType: String?
        public var schoolId: String?
        /// The file's name, kept in `fileUrl` (sanitised); `file` when absent.
        public var fileName: String?
        public var version: Int?
        /// The exact number of bytes that will follow.
        public var length: Int64
        public init(
            ownerId: UUID, type: DocumentType, title: String, description: String? = nil, fileType: String?, schoolId: String? = nil,
            fileName: String? = nil, version: Int? = nil, length: Int64
        ) {
            self.ownerId = ownerId
            self.type = type
            self.title = title
            self.description = description
            self.fileType = fileType
            self.schoolId = schoolId
            self.fileName = fileName
            self.version = version
            self.length = length
        }
    }
    public typealias Reply = Document
    public static let type = "documents.create"
    public static let cachesReply = false
}

/// `documents.append`: one chunk (the request's single attachment) at `offset` (tus: PATCH). The
/// offset must equal the committed offset, else `conflict` with `details["offset"]` the committed
/// offset. The chunk is committed before the reply. The chunk that completes the upload also
/// records the SHA-256 and the corruption flag; the chunk that completes the file's first bytes
/// is checked against the declared type (`unsupported_media_type`, nothing of it kept).
public enum DocumentsAppend: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var id: UUID
        public var offset: Int64
        public init(id: UUID, offset: Int64) {
            self.id = id
            self.offset = offset
        }
    }
    public typealias Reply = UploadStatus
    public static let type = "documents.append"
    public static let cachesReply = false
    /// Not retried by the client: a lost reply is answered by `documents.upload_status` (tus HEAD).
    public static let isIdempotent = false
}

/// `documents.upload_status`: the committed offset (tus: HEAD).
public enum DocumentsUploadStatus: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var id: UUID
        public init(id: UUID) { self.id = id }
    }
    public typealias Reply = UploadStatus
    public static let type = "documents.upload_status"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// Where an upload stands.
public struct UploadStatus: Codable, Sendable, Equatable {
    public var id: UUID
    /// Bytes committed so far: the offset the next chunk must start at.
    public var offset: Int64
    public var length: Int64
    public var complete: Bool
    /// The document once complete (with its SHA-256); nil while uploading.
    public var document: Document?
    /// While uploading: when the upload is deleted if no further chunk arrives (tus `Upload-Expires`).
    public var expiresAt: Date?
    public init(id: UUID, offset: Int64, length: Int64, complete: Bool, document: Document?, expiresAt: Date?) {
        self.id = id
        self.offset = offset
        self.length = length
        self.complete = complete
        self.document = document
        self.expiresAt = expiresAt
    }
}
