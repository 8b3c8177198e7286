import BusCore
import Foundation

/// `documents.usage`: what the Documents service holds for one user. Accounts asks it for the
/// deletion preview (seed 003 FR-007: the user sees what will be deleted before confirming), and
/// operators for quotas. Changes nothing.
public enum DocumentsUsage: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var userId: UUID
        public init(userId: UUID) { self.userId = userId }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var userId: UUID
        /// Documents the user owns, whatever the state of their bytes.
        public var documents: Int
        /// Stored bytes of those documents (committed upload bytes included).
        public var bytes: Int64
        /// Share links on those documents that can still be used (not expired, revoked or exhausted).
        public var activeShareLinks: Int
        /// Every share link on those documents, usable or not (they die with the documents).
        public var shareLinks: Int
        public init(userId: UUID, documents: Int, bytes: Int64, activeShareLinks: Int, shareLinks: Int) {
            self.userId = userId
            self.documents = documents
            self.bytes = bytes
            self.activeShareLinks = activeShareLinks
            self.shareLinks = shareLinks
        }
    }
    public static let type = "documents.usage"
    public static let isIdempotent = true
    public static let cachesReply = false
}
