import Foundation

/// One heading of a document's outline: the h2 sections and h3 subsections a reader can jump to.
public struct LegalOutlineEntry: Codable, Sendable, Equatable {
    /// 2 for a section (`## 1. Introduction`), 3 for a subsection.
    public var level: Int
    /// The heading text without the `#` marks.
    public var title: String
    /// A stable anchor for links (`1-introduction`), unique within the document.
    public var anchor: String

    public init(level: Int, title: String, anchor: String) {
        self.level = level
        self.title = title
        self.anchor = anchor
    }
}

/// What is known of one published version, without its content (history, events, audit's view).
public struct LegalVersionSummary: Codable, Sendable, Equatable {
    public var type: LegalDocumentType
    public var version: String
    /// The "Last Updated" instant the document shows (by default, when it was published); readers
    /// show its date in their own time zone.
    public var lastUpdated: Date
    public var publishedAt: Date
    /// When the version takes effect; the current version is the newest one already in effect.
    public var effectiveAt: Date
    /// Lower-case hex SHA-256 of the UTF-8 content: what an acceptance is bound to.
    public var digest: String
    /// True when users must accept again; false for an editorial fix.
    public var material: Bool

    public init(
        type: LegalDocumentType, version: String, lastUpdated: Date, publishedAt: Date, effectiveAt: Date,
        digest: String, material: Bool
    ) {
        self.type = type
        self.version = version
        self.lastUpdated = lastUpdated
        self.publishedAt = publishedAt
        self.effectiveAt = effectiveAt
        self.digest = digest
        self.material = material
    }
}

/// One version with its content and outline.
public struct LegalDocument: Codable, Sendable, Equatable {
    public var summary: LegalVersionSummary
    /// Markdown.
    public var content: String
    public var outline: [LegalOutlineEntry]

    public init(summary: LegalVersionSummary, content: String, outline: [LegalOutlineEntry]) {
        self.summary = summary
        self.content = content
        self.outline = outline
    }
}
