import BusCore
import Foundation

/// `accounts.consents_since`: Accounts' consent stream, the one way an acceptance or decline
/// reaches Audit. Accounts writes each act (with the user's IP address and user agent) in the
/// transaction that changes the user's terms standing, and an account's deletion in the
/// transaction that deletes it, so the stream holds the user's acts in commit order with the
/// deletion after them. Audit asks for the entries after the last one it chained and chains a
/// page in one transaction together with its position; asking after `n` also tells Accounts
/// that everything up to `n` is chained, so Accounts drops those entries (and their personal
/// data). For the Audit service and operators.
///
/// `waitMilliseconds` makes it a long poll: with nothing after `after`, Accounts answers when an
/// entry commits or the wait ends, whichever comes first (the fast path: no event is published,
/// so the IP addresses never travel on the event bus, and the other services' sequence of
/// Accounts' events is not filled with acts they ignore).
public enum AccountsConsentsSince: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        /// Entries with a sequence number greater than this; everything up to it is chained.
        public var after: Int64
        /// At most this many (Accounts caps it at 1,000).
        public var limit: Int
        /// How long to wait for a first entry when there is none yet (capped at 5,000).
        public var waitMilliseconds: Int

        public init(after: Int64, limit: Int = 1000, waitMilliseconds: Int = 0) {
            self.after = after
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

        public var sequence: Int64
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
            sequence: Int64, kind: Kind, userId: UUID, recordId: UUID? = nil, documentType: LegalDocumentType? = nil,
            version: String? = nil, action: AcceptanceAction? = nil, idempotencyKey: String? = nil, recordedMilliseconds: Int64,
            clientIP: String? = nil, userAgent: String? = nil
        ) {
            self.sequence = sequence
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
        /// In sequence order, gap-free from `after + 1`.
        public var entries: [Entry]
        /// The highest sequence numbered so far: more entries wait when it is beyond the last one returned.
        public var latestSequence: Int64

        public init(entries: [Entry], latestSequence: Int64) {
            self.entries = entries
            self.latestSequence = latestSequence
        }
    }

    public static let type = "accounts.consents_since"
    public static let isIdempotent = true
    /// A read (its pruning is idempotent too).
    public static let cachesReply = false
    public static let maximumLimit = 1000
    public static let maximumWaitMilliseconds = 5000
}
