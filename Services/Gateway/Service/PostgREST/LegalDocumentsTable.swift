import Bus
import Contracts
import Foundation

/// The `legal_documents` table as Supabase clients see it: one row per document type, the
/// version in effect now (what seeds 000 and 001 read with `.eq("type", …).single()`).
///
/// Columns: `id` (`<type>:<version>`), `type`, `version`, `content`, `last_updated`,
/// `effective_at`, `content_sha256`, `requires_reacceptance`.
enum LegalDocumentsTable {
    static let columns = ["id", "type", "version", "content", "last_updated", "effective_at", "content_sha256", "requires_reacceptance"]

    static func row(_ document: LegalDocument) -> [String: JSONValue] {
        let summary = document.summary
        return [
            "id": .string("\(summary.type.rawValue):\(summary.version)"),
            "type": .string(summary.type.rawValue),
            "version": .string(summary.version),
            "content": .string(document.content),
            "last_updated": .string(Timestamp.iso(summary.lastUpdated)),
            "effective_at": .string(Timestamp.iso(summary.effectiveAt)),
            "content_sha256": .string(summary.digest),
            "requires_reacceptance": .bool(summary.material),
        ]
    }

    static func apply(_ query: PostgRESTQuery, to rows: [[String: JSONValue]]) throws(PostgRESTError) -> [[String: JSONValue]] {
        try PostgRESTTable.apply(query, to: rows, table: "legal_documents", columns: columns)
    }
}

extension Timestamp {
    /// `2025-12-12T00:00:00Z`: the bus's timestamp without milliseconds when they are zero, as
    /// PostgREST prints `timestamptz` in JSON.
    static func iso(_ date: Date) -> String {
        let text = format(date)
        return text.hasSuffix(".000Z") ? String(text.dropLast(5)) + "Z" : text
    }
}
