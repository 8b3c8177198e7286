import Bus
import Contracts
import Foundation
import Postgres

/// One stored version: what is known of it, and its markdown.
public struct StoredVersion: Sendable, Equatable {
    public var summary: LegalVersionSummary
    public var content: String
}

/// The SQL of the Legal service over its `versions` table. Reads here; publishing and seeding in
/// `LegalStore+Publish.swift`.
///
/// The schema is a parameter (the service uses `legal`; tests use a private schema each), spliced
/// into the SQL text after validation because qualified names cannot be query parameters. Every
/// value travels as a parameter.
public struct LegalStore: Sendable {
    public let pool: PostgresPool
    public let schema: String
    /// `<schema>.versions`.
    let table: String

    public init(pool: PostgresPool, schema: String = LegalServiceDescription.name) {
        precondition(Self.isPlainIdentifier(schema), "invalid schema name \(schema)")
        self.pool = pool
        self.schema = schema
        self.table = "\(schema).versions"
    }

    /// The version of `type` in effect at `at` (now, by the database's clock, when `nil`): the
    /// latest `effective_at` not after it; among equal ones, the last published.
    public func current(_ type: LegalDocumentType, at: Date? = nil) async throws -> StoredVersion? {
        let sql = """
            SELECT \(VersionRow.columns), content FROM \(table)
            WHERE type = $1 AND effective_at <= coalesce($2, now())
            ORDER BY effective_at DESC, id DESC LIMIT 1
            """
        return try await pool.withConnection { db in
            try db.query(sql, type.rawValue, at).first.map(VersionRow.stored)
        }
    }

    /// One version by its string, or `nil`.
    public func version(_ type: LegalDocumentType, _ version: String) async throws -> StoredVersion? {
        let sql = "SELECT \(VersionRow.columns), content FROM \(table) WHERE type = $1 AND version = $2"
        return try await pool.withConnection { db in
            try db.query(sql, type.rawValue, version).first.map(VersionRow.stored)
        }
    }

    /// Every version of `type`, latest `effective_at` first (scheduled ones included).
    public func history(_ type: LegalDocumentType) async throws -> [LegalVersionSummary] {
        let sql = "SELECT \(VersionRow.columns) FROM \(table) WHERE type = $1 ORDER BY effective_at DESC, id DESC"
        return try await pool.withConnection { db in
            try db.query(sql, type.rawValue).map(VersionRow.summary)
        }
    }

    /// Every version of every type, in the order they were published.
    public func allVersions() async throws -> [LegalVersionSummary] {
        let sql = "SELECT \(VersionRow.columns) FROM \(table) ORDER BY id"
        return try await pool.withConnection { db in
            try db.query(sql).map(VersionRow.summary)
        }
    }

    /// `[a-z_][a-z0-9_]*`, at most 63 bytes: safe to splice into SQL as a schema name.
    static func isPlainIdentifier(_ name: String) -> Bool {
        let scalars = name.unicodeScalars
        guard let first = scalars.first, scalars.count <= 63, first == "_" || ("a"..."z").contains(first) else { return false }
        return scalars.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) }
    }
}

/// Decoding of `versions` rows, selected with ``columns`` (then `content`, when wanted).
enum VersionRow {
    static let columns = "type, version, last_updated, published_at, effective_at, digest, material"

    static func summary(_ row: PostgresRow) throws -> LegalVersionSummary {
        let (type, version, lastUpdated, publishedAt, effectiveAt, digest, material) =
            try row.decode(String.self, String.self, Date.self, Date.self, Date.self, String.self, Bool.self)
        guard let documentType = LegalDocumentType(rawValue: type) else {
            // The table's CHECK allows only known types: this would be a newer release's row.
            throw BusError(.internal, "stored document type \(type) is unknown to this build")
        }
        return LegalVersionSummary(
            type: documentType, version: version, lastUpdated: lastUpdated, publishedAt: publishedAt,
            effectiveAt: effectiveAt, digest: digest, material: material)
    }

    static func stored(_ row: PostgresRow) throws -> StoredVersion {
        StoredVersion(summary: try summary(row), content: try row.decode(String.self, column: 7))
    }
}
