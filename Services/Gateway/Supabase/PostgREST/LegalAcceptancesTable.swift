import Bus
import Contracts
import Foundation
import GatewayService

/// The `legal_acceptances` table as Supabase clients see it: the caller's own accepts,
/// acknowledgments and declines (Audit's records), as row-level security would have it.
///
/// Columns: `id`, `user_id`, `document_type`, `version`, `action`, `accepted_at` (when Audit
/// committed the record), `content_sha256` (the digest of the text agreed to).
enum LegalAcceptancesTable {
    static let schema = RestTables.legalAcceptances

    static func row(_ receipt: ConsentReceipt, user: UUID) -> [String: JSONValue] {
        [
            "id": .string(receipt.recordId.uuidString.lowercased()), "user_id": .string(user.uuidString.lowercased()),
            "document_type": .string(receipt.documentType.rawValue), "version": .string(receipt.version),
            "action": .string(receipt.action.rawValue), "accepted_at": .string(Timestamp.format(receipt.recordedAt)),
            "content_sha256": .string(receipt.digest),
        ]
    }

    /// The caller's rows the query selects, from Audit's SQL (`audit.select`).
    static func select(_ query: RestQuery, user: UUID, services: ServiceClients, context: GatewayContext) async throws -> (
        rows: [[String: JSONValue]], total: Int?
    ) {
        let reply = try await services.call(
            .audit, AuditSelect.self, .init(userId: user, query: query), principal: Credential.principal(for: user), context: context)
        return (reply.receipts.map { row($0, user: user) }, reply.total)
    }
}
