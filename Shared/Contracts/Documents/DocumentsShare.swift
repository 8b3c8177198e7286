import BusCore
import Foundation

/// A share link as its owner sees it. The token itself is shown once, at creation.
public struct ShareLink: Codable, Sendable, Equatable {
    public var id: UUID
    public var documentId: UUID
    public var createdAt: Date
    public var expiresAt: Date
    public var maxUses: Int?
    public var uses: Int
    public var revokedAt: Date?
    /// Every use: when and from where.
    public var useLog: [ShareLinkUse]
    public init(
        id: UUID, documentId: UUID, createdAt: Date, expiresAt: Date, maxUses: Int?, uses: Int, revokedAt: Date?, useLog: [ShareLinkUse]
    ) {
        self.id = id
        self.documentId = documentId
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.maxUses = maxUses
        self.uses = uses
        self.revokedAt = revokedAt
        self.useLog = useLog
    }
}

public struct ShareLinkUse: Codable, Sendable, Equatable {
    public var usedAt: Date
    public var clientIP: String?
    public init(usedAt: Date, clientIP: String?) {
        self.usedAt = usedAt
        self.clientIP = clientIP
    }
}

/// `documents.share_create`: a link to one complete document, valid for `expiresInSeconds`
/// (at most `DOCUMENTS_SHARE_MAX_LIFETIME`), optionally for at most `maxUses` opens.
public enum DocumentsShareCreate: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var documentId: UUID
        public var expiresInSeconds: Int
        public var maxUses: Int?
        public init(documentId: UUID, expiresInSeconds: Int, maxUses: Int? = nil) {
            self.documentId = documentId
            self.expiresInSeconds = expiresInSeconds
            self.maxUses = maxUses
        }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var link: ShareLink
        /// The secret the URL carries (256 random bits, base64url); only its SHA-256 is stored.
        public var token: String
        public init(link: ShareLink, token: String) {
            self.link = link
            self.token = token
        }
    }
    public static let type = "documents.share_create"
    public static let cachesReply = false
}

/// `documents.share_list`: a document's links with their use logs (owner only).
public enum DocumentsShareList: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var documentId: UUID
        public init(documentId: UUID) { self.documentId = documentId }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var links: [ShareLink]
        public init(links: [ShareLink]) { self.links = links }
    }
    public static let type = "documents.share_list"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// `documents.share_revoke`: the link stops working at once (a repeat changes nothing).
public enum DocumentsShareRevoke: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var linkId: UUID
        public init(linkId: UUID) { self.linkId = linkId }
    }
    public typealias Reply = ShareLink
    public static let type = "documents.share_revoke"
    public static let isIdempotent = true
    public static let cachesReply = true
}

/// `documents.share_open`: uses a link (anyone holding the token may, no sign-in) and returns
/// the document with a `grant` that `documents.read` accepts for `DOCUMENTS_SHARE_GRANT_LIFETIME`
/// after the use's last request. A use is one download or playback: a request without a byte
/// range counts one (logged with time and IP); a `byteRange` request from the same client IP
/// while its use is active continues that use for free, even on a used-up link.
/// Unknown token: `not_found`; expired, revoked or used up: `gone`.
public enum DocumentsShareOpen: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var token: String
        public var clientIP: String?
        /// The HTTP request asks for a byte range (`Range`); nil or false: the whole file.
        public var byteRange: Bool?
        public init(token: String, clientIP: String?, byteRange: Bool? = nil) {
            self.token = token
            self.clientIP = clientIP
            self.byteRange = byteRange
        }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var document: Document
        public var grant: UUID
        public var grantExpiresAt: Date
        public init(document: Document, grant: UUID, grantExpiresAt: Date) {
            self.document = document
            self.grant = grant
            self.grantExpiresAt = grantExpiresAt
        }
    }
    public static let type = "documents.share_open"
    public static let cachesReply = false
}
