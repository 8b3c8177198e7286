import BusCore
import Foundation

/// `documents.read`: bytes `[offset, offset + length)` of a complete document, as the reply's one
/// attachment (fewer at the end of the file; none at or past the end). `length` is at most the
/// service's chunk size (`DOCUMENTS_CHUNK_SIZE`); larger asks are `invalid_argument`. `gone` when
/// the metadata is here but the bytes are not; `conflict` while still uploading.
public enum DocumentsRead: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var id: UUID
        public var offset: Int64
        public var length: Int
        /// Read through a share link instead of as the owner: the `grant` `documents.share_open` gave.
        public var shareGrant: UUID?
        public init(id: UUID, offset: Int64, length: Int, shareGrant: UUID? = nil) {
            self.id = id
            self.offset = offset
            self.length = length
            self.shareGrant = shareGrant
        }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var id: UUID
        public var offset: Int64
        /// Bytes in the attachment.
        public var count: Int
        /// The document's total length (for `Content-Range`).
        public var totalLength: Int64
        /// The SHA-256 hex of the whole document (a strong ETag).
        public var etag: String
        public var fileType: String?
        public init(id: UUID, offset: Int64, count: Int, totalLength: Int64, etag: String, fileType: String?) {
            self.id = id
            self.offset = offset
            self.count = count
            self.totalLength = totalLength
            self.etag = etag
            self.fileType = fileType
        }
    }
    public static let type = "documents.read"
    public static let cachesReply = false
    /// Not idempotent on purpose: the server's idempotency cache would keep every reply's bytes.
    public static let isIdempotent = false
}
