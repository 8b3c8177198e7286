import BusCore
import Foundation

/// `audit.record`: records an accept, acknowledge or decline. Requires an idempotency key (else
/// `invalid_argument`); a repeat of the key for the same user returns the original receipt and
/// writes nothing. Answered only after the record has committed. The version must be one the
/// Legal service published (`invalid_argument` otherwise).
public enum AuditRecord: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var userId: UUID
        public var documentType: LegalDocumentType
        public var version: String
        public var action: AcceptanceAction
        /// The client's address as the gateway saw it.
        public var clientIP: String?
        public var userAgent: String?

        public init(
            userId: UUID, documentType: LegalDocumentType, version: String, action: AcceptanceAction,
            clientIP: String? = nil, userAgent: String? = nil
        ) {
            self.userId = userId
            self.documentType = documentType
            self.version = version
            self.action = action
            self.clientIP = clientIP
            self.userAgent = userAgent
        }
    }
    public typealias Reply = ConsentReceipt
    public static let type = "audit.record"
    public static let isIdempotent = true
    public static let cachesReply = true
}

/// Where one user stands with one document type.
public struct AcceptanceStatus: Codable, Sendable, Equatable {
    public var documentType: LegalDocumentType
    /// The version in effect now; nil when none is.
    public var currentVersion: String?
    /// The user's last accept/acknowledge/decline, if any.
    public var lastAction: AcceptanceAction?
    public var lastVersion: String?
    public var lastRecordedAt: Date?
    /// True when the user never accepted, last declined, or a material version took effect after
    /// their acceptance. An editorial version does not set it.
    public var needsAcceptance: Bool

    public init(
        documentType: LegalDocumentType, currentVersion: String?, lastAction: AcceptanceAction?,
        lastVersion: String?, lastRecordedAt: Date?, needsAcceptance: Bool
    ) {
        self.documentType = documentType
        self.currentVersion = currentVersion
        self.lastAction = lastAction
        self.lastVersion = lastVersion
        self.lastRecordedAt = lastRecordedAt
        self.needsAcceptance = needsAcceptance
    }
}

/// `audit.status`: one entry per document type for a user.
public enum AuditStatus: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var userId: UUID
        public init(userId: UUID) { self.userId = userId }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var documents: [AcceptanceStatus]
        public init(documents: [AcceptanceStatus]) { self.documents = documents }
    }
    public static let type = "audit.status"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// One record as its subject sees it (history and export).
public struct AcceptanceRecord: Codable, Sendable, Equatable {
    public var receipt: ConsentReceipt
    public var clientIP: String?
    public var userAgent: String?

    public init(receipt: ConsentReceipt, clientIP: String?, userAgent: String?) {
        self.receipt = receipt
        self.clientIP = clientIP
        self.userAgent = userAgent
    }
}

/// `audit.history`: a user's records, newest first, keyset-paginated by `before` (a position in
/// the user's history returned as `next`). Also the user's data export when paged to the end.
public enum AuditHistory: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var userId: UUID
        public var documentType: LegalDocumentType?
        public var limit: Int
        /// The `next` cursor of a previous page.
        public var before: String?
        public init(userId: UUID, documentType: LegalDocumentType? = nil, limit: Int = 100, before: String? = nil) {
            self.userId = userId
            self.documentType = documentType
            self.limit = limit
            self.before = before
        }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var records: [AcceptanceRecord]
        /// Pass as `before` for the next page; nil at the end.
        public var next: String?
        public init(records: [AcceptanceRecord], next: String?) {
            self.records = records
            self.next = next
        }
    }
    public static let type = "audit.history"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// `audit.verify_receipt`: whether a receipt matches a stored record whose chain link holds, and
/// whether its signature is ours.
public enum AuditVerifyReceipt: RPCMethod {
    public typealias Request = ConsentReceipt
    public struct Reply: Codable, Sendable, Equatable {
        public var valid: Bool
        /// Why not, when not valid.
        public var reason: String?
        public init(valid: Bool, reason: String?) {
            self.valid = valid
            self.reason = reason
        }
    }
    public static let type = "audit.verify_receipt"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// `audit.verify`: walks every chain (operator only) and reports the first broken link of each.
public enum AuditVerify: RPCMethod {
    public typealias Request = Empty
    public struct ChainReport: Codable, Sendable, Equatable {
        public var chain: Int
        public var records: Int64
        public var headHash: String?
        /// The first position whose stored hash does not match its recomputed one, or whose
        /// previous-hash link is wrong; nil when the chain holds.
        public var firstBrokenPosition: Int64?
        public var problem: String?
        public init(chain: Int, records: Int64, headHash: String?, firstBrokenPosition: Int64?, problem: String?) {
            self.chain = chain
            self.records = records
            self.headHash = headHash
            self.firstBrokenPosition = firstBrokenPosition
            self.problem = problem
        }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var valid: Bool
        public var chains: [ChainReport]
        /// Checkpoints whose signature or head did not match the chain.
        public var badCheckpoints: [Int64]
        public init(valid: Bool, chains: [ChainReport], badCheckpoints: [Int64]) {
            self.valid = valid
            self.chains = chains
            self.badCheckpoints = badCheckpoints
        }
    }
    public static let type = "audit.verify"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// `audit.erase_subject`: removes the personal link of a user's records (operator or service
/// principal). The records, digests, times and chains stay and still verify. Idempotent.
public enum AuditEraseSubject: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var userId: UUID
        public init(userId: UUID) { self.userId = userId }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var erasedRecords: Int
        public init(erasedRecords: Int) { self.erasedRecords = erasedRecords }
    }
    public static let type = "audit.erase_subject"
    public static let isIdempotent = true
    public static let cachesReply = true
}

/// `audit.public_key`: the Ed25519 public key (base64, raw 32 bytes) receipts and checkpoints
/// are signed with.
public enum AuditPublicKey: RPCMethod {
    public typealias Request = Empty
    public struct Reply: Codable, Sendable, Equatable {
        public var publicKey: String
        public init(publicKey: String) { self.publicKey = publicKey }
    }
    public static let type = "audit.public_key"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// The act recorded (who, what, which version, how); the address and agent it came from are
/// metadata: a retry from elsewhere is the same record.
extension AuditRecord.Request: IdempotencyFingerprinted {
    public func hashFingerprint(into hasher: inout Hasher) {
        hasher.combine(userId)
        hasher.combine(documentType.rawValue)
        hasher.combine(version)
        hasher.combine(action.rawValue)
    }
}
