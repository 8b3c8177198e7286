import BusCore
import Foundation

/// `accounts.consents_since`: Accounts' consent stream, the one way an acceptance or decline
/// reaches Audit. Accounts writes each act (with the user's IP address and user agent) in the
/// transaction that changes the user's terms standing, and an account's deletion in the
/// transaction that deletes it, so the stream holds the user's acts in commit order with the
/// deletion after them. Audit asks for the entries after the last one it chained and chains a
/// page in one transaction together with its position; asking after a position also tells
/// Accounts that everything up to it is chained, so Accounts drops those entries (and their
/// personal data). For the Audit service and operators.
///
/// The stream is in ``ConsentStreamPosition`` order, and an entry is read only once every
/// transaction that could still write one before it has ended: what a reply returns after a
/// position is final, and no entry can later appear before its last one.
///
/// `waitMilliseconds` makes it a long poll: with nothing after `after`, Accounts answers when an
/// entry commits or the wait ends, whichever comes first (the fast path: no event is published,
/// so the IP addresses never travel on the event bus, and the other services' sequence of
/// Accounts' events is not filled with acts they ignore).
public enum AccountsConsentsSince: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        /// Entries after this position (or after `readAfter`); everything up to it is chained
        /// (``ConsentStreamPosition/start``: all).
        public var after: ConsentStreamPosition
        /// The page starts after this later position instead: a reader asking for the next page
        /// while it still chains the one before (the entries from `after` to here), which Accounts
        /// keeps. At least `after`. An Accounts older than this field answers with the page after
        /// `after`, which the reader recognises (its first entry is not past `readAfter`) and drops;
        /// so the field never makes an older Accounts prune what is not chained.
        public var readAfter: ConsentStreamPosition?
        /// Only from an Audit whose position is still a sequence number of the numbered stream
        /// (before the stream was ordered by transaction, Accounts migration 0180): the entries
        /// numbered up to it are chained and deleted, and the reply starts at the first of the
        /// rest (`after` is then ``ConsentStreamPosition/start``).
        public var afterSequence: Int64?
        /// At most this many (Accounts caps it at 1,000).
        public var limit: Int
        /// How long to wait for a first entry when there is none yet (capped at 5,000).
        public var waitMilliseconds: Int

        public init(
            after: ConsentStreamPosition, readAfter: ConsentStreamPosition? = nil, afterSequence: Int64? = nil, limit: Int = 1000,
            waitMilliseconds: Int = 0
        ) {
            self.after = after
            self.readAfter = readAfter
            self.afterSequence = afterSequence
            self.limit = limit
            self.waitMilliseconds = waitMilliseconds
        }
    }

    /// One act or deletion, as the stream carries it.
    public struct Entry: Codable, Sendable, Equatable {
        public enum Kind: String, Codable, Sendable {
            /// An accept or decline of a document version.
            case consent
            /// The account was deleted: the user's records are to be erased, after every act before it.
            case deleted
        }

        public var position: ConsentStreamPosition
        public var kind: Kind
        public var userId: UUID
        /// The id the record is to have: given out by Accounts at commit, so a receipt can be
        /// asked for by it before the record is chained.
        public var recordId: UUID?
        public var documentType: LegalDocumentType?
        public var version: String?
        public var action: AcceptanceAction?
        /// Scoped to the user: a retried act is recorded once.
        public var idempotencyKey: String?
        /// When the act (or deletion) committed, in Unix milliseconds: the record's time.
        public var recordedMilliseconds: Int64
        public var clientIP: String?
        public var userAgent: String?

        public init(
            position: ConsentStreamPosition, kind: Kind, userId: UUID, recordId: UUID? = nil, documentType: LegalDocumentType? = nil,
            version: String? = nil, action: AcceptanceAction? = nil, idempotencyKey: String? = nil, recordedMilliseconds: Int64,
            clientIP: String? = nil, userAgent: String? = nil
        ) {
            self.position = position
            self.kind = kind
            self.userId = userId
            self.recordId = recordId
            self.documentType = documentType
            self.version = version
            self.action = action
            self.idempotencyKey = idempotencyKey
            self.recordedMilliseconds = recordedMilliseconds
            self.clientIP = clientIP
            self.userAgent = userAgent
        }
    }

    public struct Reply: Codable, Sendable, Equatable {
        /// In stream order, every readable entry after `after`, up to the limit.
        public var entries: [Entry]
        /// The last entry readable now (nil: none is left after the pruning): a caller whose
        /// position has reached it has chained everything that had committed when it asked.
        public var latest: ConsentStreamPosition?
        /// How many readable entries follow the last one returned, counted up to
        /// ``remainingCountLimit`` (which then means at least that many).
        public var remaining: Int

        public init(entries: [Entry], latest: ConsentStreamPosition?, remaining: Int) {
            self.entries = entries
            self.latest = latest
            self.remaining = remaining
        }
    }

    public static let type = "accounts.consents_since"
    public static let isIdempotent = true
    /// A read (its pruning is idempotent too).
    public static let cachesReply = false
    public static let maximumLimit = 1000
    public static let maximumWaitMilliseconds = 5000
    public static let remainingCountLimit = 10_000
}

/// A place in the consent stream, which is in (`transaction`, `entry`) order.
///
/// `transaction` is the 64-bit transaction id (PostgreSQL's `xid8`: the epoch and the 32-bit
/// id) of the transaction that wrote the entry, or of a later writer of the same user's entries
/// still waiting when it wrote, so that a user's entries stay in the order their transactions
/// committed. It fits an `Int64` until a cluster has used 2⁶³ transaction ids. `entry` is the
/// entry's id in Accounts' table, the order within a transaction.
public struct ConsentStreamPosition: Codable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public var transaction: Int64
    public var entry: Int64

    public init(transaction: Int64, entry: Int64) {
        self.transaction = transaction
        self.entry = entry
    }

    /// Before every entry.
    public static let start = ConsentStreamPosition(transaction: 0, entry: 0)

    public static func < (a: Self, b: Self) -> Bool { (a.transaction, a.entry) < (b.transaction, b.entry) }

    public var description: String { "\(transaction):\(entry)" }
}

/// `accounts.consents_pending`: where one user's last entry still in the consent stream is (nil:
/// none is), so that a read of their records (Audit's history, status and select) can wait until
/// Audit's position covers it, and not answer without an act the user was told is recorded. It
/// looks at that user's entries alone: a read waits for its own user's acts, never behind another
/// user's backlog. For the Audit service and operators, as the stream is.
public enum AccountsConsentsPending: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var userId: UUID
        public init(userId: UUID) { self.userId = userId }
    }

    public struct Reply: Codable, Sendable, Equatable {
        /// The position of the user's last act or deletion not yet pruned (an entry Audit chained
        /// stays until its next read of the stream); nil when the stream holds none of theirs.
        public var latest: ConsentStreamPosition?
        public init(latest: ConsentStreamPosition?) { self.latest = latest }
    }

    public static let type = "accounts.consents_pending"
    public static let isIdempotent = true
    public static let cachesReply = false
}
