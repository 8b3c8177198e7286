import BusCore
import Foundation

/// `legal.current`: the version of a type in effect now (or at `at`), with content and outline.
/// `not_found` when none is in effect yet.
public enum LegalCurrent: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var type: LegalDocumentType
        /// Ask what was (or will be) in effect at another time; now when absent.
        public var at: Date?
        public init(type: LegalDocumentType, at: Date? = nil) {
            self.type = type
            self.at = at
        }
    }
    public typealias Reply = LegalDocument
    public static let type = "legal.current"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// `legal.version`: one published version by its version string; `not_found` when unknown.
public enum LegalVersion: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var type: LegalDocumentType
        public var version: String
        public init(type: LegalDocumentType, version: String) {
            self.type = type
            self.version = version
        }
    }
    public typealias Reply = LegalDocument
    public static let type = "legal.version"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// `legal.history`: every published version of a type, newest `effectiveAt` first, including
/// versions not yet in effect.
public enum LegalHistory: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var type: LegalDocumentType
        public init(type: LegalDocumentType) { self.type = type }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var versions: [LegalVersionSummary]
        public init(versions: [LegalVersionSummary]) { self.versions = versions }
    }
    public static let type = "legal.history"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// `legal.versions`: every published version of every type, oldest publication first: what a
/// consumer (audit, accounts) loads at start before following `legal.published`.
public enum LegalAllVersions: RPCMethod {
    public typealias Request = Empty
    public struct Reply: Codable, Sendable, Equatable {
        public var versions: [LegalVersionSummary]
        public init(versions: [LegalVersionSummary]) { self.versions = versions }
    }
    public static let type = "legal.versions"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// `legal.publish`: a new version (operator principal only, else `forbidden`). A version string is
/// never reused for a type (`conflict`), except that publishing exactly the same content again
/// returns the existing version, so an operator's retry is harmless. Content must be non-empty
/// valid UTF-8 markdown under 1 MiB (`invalid_argument` / `payload_too_large`). Emits
/// `legal.published` through the outbox.
public enum LegalPublish: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var type: LegalDocumentType
        public var version: String
        public var content: String
        /// The "Last Updated" instant the document shows; the instant of publication (to the
        /// second) when absent.
        public var lastUpdated: Date?
        /// When it takes effect; immediately when absent. May be in the future.
        public var effectiveAt: Date?
        /// Whether users must accept again.
        public var material: Bool

        public init(
            type: LegalDocumentType, version: String, content: String, lastUpdated: Date? = nil,
            effectiveAt: Date? = nil, material: Bool
        ) {
            self.type = type
            self.version = version
            self.content = content
            self.lastUpdated = lastUpdated
            self.effectiveAt = effectiveAt
            self.material = material
        }
    }
    public typealias Reply = LegalVersionSummary
    public static let type = "legal.publish"
    public static let isIdempotent = true
    public static let cachesReply = true
}

/// Largest content `legal.publish` accepts, in UTF-8 bytes.
public let legalMaximumContentBytes = 1 << 20
