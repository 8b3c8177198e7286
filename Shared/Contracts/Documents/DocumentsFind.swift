import BusCore
import Foundation

/// `documents.get`: one document by `id`, by `fileUrl`, or by `reference` (seed 002's viewer: a
/// reference containing `/` is a file URL, anything else must be an id). Exactly one of the three.
/// Another user's document is `not_found`.
public enum DocumentsGet: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var id: UUID?
        public var fileUrl: String?
        public var reference: String?
        public init(id: UUID? = nil, fileUrl: String? = nil, reference: String? = nil) {
            self.id = id
            self.fileUrl = fileUrl
            self.reference = reference
        }
    }
    public typealias Reply = Document
    public static let type = "documents.get"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// Which of a user's documents a collection holds.
public struct CollectionFilter: Codable, Sendable, Equatable {
    public var ownerId: UUID
    public var type: DocumentType?
    public var schoolId: String?
    public init(ownerId: UUID, type: DocumentType? = nil, schoolId: String? = nil) {
        self.ownerId = ownerId
        self.type = type
        self.schoolId = schoolId
    }
}

/// `documents.list`: a collection in its stable order (newest first: `createdAt` descending, then
/// id), a page at a time. `after` is the previous page's `nextCursor` (keyset pagination: inserts
/// between pages neither repeat nor skip a document).
public enum DocumentsList: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var filter: CollectionFilter
        public var limit: Int?
        public var after: String?
        public init(filter: CollectionFilter, limit: Int? = nil, after: String? = nil) {
            self.filter = filter
            self.limit = limit
            self.after = after
        }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var documents: [Document]
        /// Where the next page starts; nil on the last page.
        public var nextCursor: String?
        /// How many documents the whole collection holds.
        public var total: Int
        public init(documents: [Document], nextCursor: String?, total: Int) {
            self.documents = documents
            self.nextCursor = nextCursor
            self.total = total
        }
    }
    public static let type = "documents.list"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// `documents.position`: where one document stands in a collection ("3 of 10") and its
/// neighbours, in the order of `documents.list`.
public enum DocumentsPosition: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var id: UUID
        public var filter: CollectionFilter
        public init(id: UUID, filter: CollectionFilter) {
            self.id = id
            self.filter = filter
        }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var id: UUID
        /// 1-based.
        public var position: Int
        public var total: Int
        public var previousId: UUID?
        public var nextId: UUID?
        public init(id: UUID, position: Int, total: Int, previousId: UUID?, nextId: UUID?) {
            self.id = id
            self.position = position
            self.total = total
            self.previousId = previousId
            self.nextId = nextId
        }
    }
    public static let type = "documents.position"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// `documents.delete`: the document, its bytes and its share links, in one transaction.
public enum DocumentsDelete: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var id: UUID
        public init(id: UUID) { self.id = id }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var id: UUID
        public var shareLinksDeleted: Int
        public init(id: UUID, shareLinksDeleted: Int) {
            self.id = id
            self.shareLinksDeleted = shareLinksDeleted
        }
    }
    public static let type = "documents.delete"
    public static let isIdempotent = true
    public static let cachesReply = true
}
