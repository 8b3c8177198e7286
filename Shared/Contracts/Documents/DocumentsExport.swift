import BusCore
import Foundation

/// `documents.export`: one page of everything Documents holds about an owner, for the user's data
/// export: every document whatever the state of its bytes (uploads in progress and missing bytes
/// included), each with all its share links and their use logs (never a link's token: only its
/// hash is stored). Newest first; `after` is the previous page's `nextCursor`. The bytes are read
/// with `documents.read`, as downloads are. A user principal exports only itself.
public enum DocumentsExport: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var ownerId: UUID
        /// 1 to ``PageLimit/documents``; 50 when nil.
        public var limit: Int?
        public var after: String?
        public init(ownerId: UUID, limit: Int? = nil, after: String? = nil) {
            self.ownerId = ownerId
            self.limit = limit
            self.after = after
        }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var documents: [Document]
        /// The share links of this page's documents, oldest first per document.
        public var shareLinks: [ShareLink]
        /// Where the next page starts; nil on the last page.
        public var nextCursor: String?
        public init(documents: [Document], shareLinks: [ShareLink], nextCursor: String?) {
            self.documents = documents
            self.shareLinks = shareLinks
            self.nextCursor = nextCursor
        }
    }
    public static let type = "documents.export"
    public static let isIdempotent = true
    /// A read.
    public static let cachesReply = false
}
