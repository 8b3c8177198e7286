import BusCore
import Foundation

/// `documents.select`: the `/rest/v1/documents` read, done in Documents' SQL. Only `ownerId`'s
/// documents whose bytes are complete (or gone) are ever looked at; `query` (checked against
/// ``RestTables/documents``) filters, orders and pages them. A user principal may only ask for
/// its own. `invalid_argument` (details `code`, PostgREST's code) for a query the table refuses.
public enum DocumentsSelect: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var ownerId: UUID
        public var query: RestQuery
        public init(ownerId: UUID, query: RestQuery) {
            self.ownerId = ownerId
            self.query = query
        }
    }
    public struct Reply: Codable, Sendable, Equatable {
        /// At most `query.limit` documents, in the query's order.
        public var documents: [Document]
        /// Every document the filters match, when `query.count` asked for it.
        public var total: Int?
        public init(documents: [Document], total: Int?) {
            self.documents = documents
            self.total = total
        }
    }
    public static let type = "documents.select"
    public static let isIdempotent = true
    /// A read.
    public static let cachesReply = false
}
