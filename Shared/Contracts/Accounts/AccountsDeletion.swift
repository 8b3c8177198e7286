import BusCore
import Foundation

/// One kind of data in a deletion preview (seed 003 FR-007: say what is deleted and what stays).
public struct DeletionItem: Codable, Sendable, Equatable {
    /// A stable key (`profile`, `eligibility_confirmations`, `documents`, `share_links`, `sessions`,
    /// `consent_records`, ...).
    public var category: String
    public var description: String
    /// How many, where it could be gathered; nil otherwise (the description then says so).
    public var count: Int?
    /// Stored bytes, for kinds that have a size (documents); nil when unknown or not applicable.
    public var bytes: Int64?
    public init(category: String, description: String, count: Int? = nil, bytes: Int64? = nil) {
        self.category = category
        self.description = description
        self.count = count
        self.bytes = bytes
    }
}

/// What deleting an account does, shown before the user confirms.
public struct DeletionPreview: Codable, Sendable, Equatable {
    public var userId: UUID
    public var deleted: [DeletionItem]
    /// Kept, and why (consent proofs stay, pseudonymised).
    public var kept: [DeletionItem]
    public init(userId: UUID, deleted: [DeletionItem], kept: [DeletionItem]) {
        self.userId = userId
        self.deleted = deleted
        self.kept = kept
    }
}

/// `accounts.deletion_preview`: what deleting the account would delete and keep. Changes nothing.
public enum AccountsDeletionPreview: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var userId: UUID
        public init(userId: UUID) { self.userId = userId }
    }
    public typealias Reply = DeletionPreview
    public static let type = "accounts.deletion_preview"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// A pending deletion: confirmed with its id before `expiresAt`, or cancelled.
public struct DeletionRequest: Codable, Sendable, Equatable {
    public var requestId: UUID
    public var userId: UUID
    public var requestedAt: Date
    public var expiresAt: Date
    public var preview: DeletionPreview
    public init(requestId: UUID, userId: UUID, requestedAt: Date, expiresAt: Date, preview: DeletionPreview) {
        self.requestId = requestId
        self.userId = userId
        self.requestedAt = requestedAt
        self.expiresAt = expiresAt
        self.preview = preview
    }
}

/// `accounts.request_deletion`: starts a deletion the user must confirm (replaces any pending one).
public enum AccountsRequestDeletion: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var userId: UUID
        public init(userId: UUID) { self.userId = userId }
    }
    public typealias Reply = DeletionRequest
    public static let type = "accounts.request_deletion"
    public static let isIdempotent = false
    public static let cachesReply = false
}

/// The request of `accounts.confirm_deletion` and `accounts.cancel_deletion`.
public struct DeletionDecision: Codable, Sendable, Equatable {
    public var userId: UUID
    public var requestId: UUID
    public init(userId: UUID, requestId: UUID) {
        self.userId = userId
        self.requestId = requestId
    }
}

/// `accounts.confirm_deletion`: deletes the account and emits `account.deleted` in one
/// transaction; Audit erasure follows. `not_found` for an unknown request, `gone` for an expired
/// one. A repeat after success answers with the same outcome, the same certificate included.
public enum AccountsConfirmDeletion: RPCMethod {
    public typealias Request = DeletionDecision
    public struct Reply: Codable, Sendable, Equatable {
        public var userId: UUID
        public var deletedAt: Date
        /// The signed deletion certificate (nil only for deletions made before certificates existed).
        public var certificate: DeletionCertificate?
        public init(userId: UUID, deletedAt: Date, certificate: DeletionCertificate? = nil) {
            self.userId = userId
            self.deletedAt = deletedAt
            self.certificate = certificate
        }
    }
    public static let type = "accounts.confirm_deletion"
    public static let isIdempotent = true
    public static let cachesReply = true
}

/// `accounts.cancel_deletion`: drops the pending request; the account stays as it was.
public enum AccountsCancelDeletion: RPCMethod {
    public typealias Request = DeletionDecision
    public typealias Reply = Empty
    public static let type = "accounts.cancel_deletion"
    public static let isIdempotent = true
    public static let cachesReply = true
}

/// Events the Accounts service publishes (topic = the type), each through its outbox.
public enum AccountsEvents {
    /// An account was deleted; the payload is ``AccountDeleted``. Documents and Audit erase the
    /// user's data on it; sessions end.
    public static let deleted = "account.deleted"
}

/// The payload of `account.deleted`.
public struct AccountDeleted: Codable, Sendable, Equatable {
    public var userId: UUID
    public var deletedAt: Date
    public init(userId: UUID, deletedAt: Date) {
        self.userId = userId
        self.deletedAt = deletedAt
    }
}
