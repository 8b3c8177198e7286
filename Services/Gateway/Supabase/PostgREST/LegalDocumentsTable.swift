import Bus
import Contracts
import Foundation
import GatewayService

/// The `legal_documents` table as Supabase clients see it: one row per document type, the
/// version in effect now (what seeds 000 and 001 read with `.eq("type", …).single()`). Its rows
/// are the gateway's copy of the texts (``LegalTexts``); a query runs over them with the meaning
/// the other tables' SQL gives it (``InMemoryTable``).
///
/// Columns: `id` (`<type>:<version>`, the key), `type`, `version`, `content`, `last_updated`,
/// `effective_at`, `content_sha256`, `requires_reacceptance`.
enum LegalDocumentsTable {
    static let schema = RestTables.legalDocuments
    static let table = InMemoryTable(schema: schema, key: "id")

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
}

extension Timestamp {
    /// `2025-12-12T00:00:00Z`: the bus's timestamp without milliseconds when they are zero, as
    /// PostgREST prints `timestamptz` in JSON.
    static func iso(_ date: Date) -> String {
        let text = format(date)
        return text.hasSuffix(".000Z") ? String(text.dropLast(5)) + "Z" : text
    }
}
