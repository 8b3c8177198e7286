import BusCore
import Foundation

/// `audit.select`: the `/rest/v1/legal_acceptances` read, done in Audit's SQL: only `userId`'s
/// records, filtered, ordered and paged by `query` (checked against
/// ``RestTables/legalAcceptances``). A user principal may only ask for its own.
/// `invalid_argument` (details `code`, PostgREST's code) for a query the table refuses.
public enum AuditSelect: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var userId: UUID
        public var query: RestQuery
        public init(userId: UUID, query: RestQuery) {
            self.userId = userId
            self.query = query
        }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var receipts: [ConsentReceipt]
        /// Every record the filters match, when `query.count` asked for it.
        public var total: Int?
        public init(receipts: [ConsentReceipt], total: Int?) {
            self.receipts = receipts
            self.total = total
        }
    }
    public static let type = "audit.select"
    public static let isIdempotent = true
    /// A read.
    public static let cachesReply = false
}
