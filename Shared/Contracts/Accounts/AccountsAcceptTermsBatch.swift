import BusCore
import Foundation

/// `accounts.accept_terms_batch`: many `accounts.accept_terms` in one call, for the gateway, which
/// gathers the acceptances that arrive while its previous batch is under way (group commit, no
/// timer). Each item is exactly an `accept_terms` of its own, answered on its own: Accounts records
/// the batch through Audit in one call and stores every user's new terms version in one statement.
/// The caller has checked that each item's user is the one its credential names; only services that
/// may act for users (and operators) may call it. Every item carries its own idempotency key, so a
/// retried batch records each acceptance once.
public enum AccountsAcceptTermsBatch: RPCMethod {
    public struct Item: Codable, Sendable, Equatable {
        public var request: AccountsTermsRequest
        /// Scoped to the item's user like `accept_terms`'s envelope key; at most 150 bytes.
        public var idempotencyKey: String

        public init(request: AccountsTermsRequest, idempotencyKey: String) {
            self.request = request
            self.idempotencyKey = idempotencyKey
        }
    }

    public struct Request: Codable, Sendable, Equatable {
        public var items: [Item]
        public init(items: [Item]) { self.items = items }
    }

    public struct Reply: Codable, Sendable, Equatable {
        /// One per item, in order.
        public var outcomes: [ItemOutcome<AccountUser>]
        public init(outcomes: [ItemOutcome<AccountUser>]) { self.outcomes = outcomes }
    }

    public static let type = "accounts.accept_terms_batch"
    public static let isIdempotent = true
    /// Retried as a whole after a lost reply, it runs again: every item's own key makes that record
    /// nothing twice. Holding replies of whole batches would cost the server megabytes a second.
    public static let cachesReply = false
    /// The most items one call may carry.
    public static let maximumItems = 1000
}
