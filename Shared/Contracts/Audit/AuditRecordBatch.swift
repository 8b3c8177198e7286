import BusCore
import Foundation

/// `audit.record_batch`: many `audit.record` in one call, each with its own idempotency key and
/// its own outcome, committed in the same group commit and answered after it. For services acting
/// for users (Accounts) and operators.
public enum AuditRecordBatch: RPCMethod {
    public struct Item: Codable, Sendable, Equatable {
        public var record: AuditRecord.Request
        /// What `audit.record` takes in its envelope: at most 200 bytes, scoped to the user.
        public var idempotencyKey: String

        public init(record: AuditRecord.Request, idempotencyKey: String) {
            self.record = record
            self.idempotencyKey = idempotencyKey
        }
    }

    public struct Request: Codable, Sendable, Equatable {
        public var items: [Item]
        /// False when the caller keeps nothing of the receipts but their version and time (Accounts
        /// storing a user's terms state): the signatures are then left empty, saving an Ed25519
        /// signature per record. The records are the same; `audit.history` signs them when read.
        public var signReceipts: Bool

        public init(items: [Item], signReceipts: Bool = true) {
            self.items = items
            self.signReceipts = signReceipts
        }
    }

    public struct Reply: Codable, Sendable, Equatable {
        /// One per item, in order.
        public var outcomes: [ItemOutcome<ConsentReceipt>]
        public init(outcomes: [ItemOutcome<ConsentReceipt>]) { self.outcomes = outcomes }
    }

    public static let type = "audit.record_batch"
    public static let isIdempotent = true
    /// Retried as a whole after a lost reply, it runs again: every item's own key makes that record
    /// nothing twice. Holding replies of whole batches would cost the server megabytes a second.
    public static let cachesReply = false
    /// The most items one call may carry.
    public static let maximumItems = 1000
}
