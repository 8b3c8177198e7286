import Bus
import Contracts
import Foundation
import Hex
import Postgres

/// Reads of a user's records: status, history (also the data export), and one record for receipt
/// verification. All through the subject's pseudonym: once erased, a user has no records.
struct AuditReader: Sendable {
    let pool: PostgresPool
    let catalog: VersionCatalog

    func status(of user: UUID, now: Date = Date()) async throws -> [AcceptanceStatus] {
        try await pool.withConnection { db in
            var last: [String: AcceptanceRules.LastAction] = [:]
            let rows = try db.query(
                """
                SELECT DISTINCT ON (r.document_type) r.document_type, r.action, r.version, r.recorded_ms
                FROM audit.subjects s JOIN audit.records r ON r.subject = s.pseudonym
                WHERE s.user_id = $1
                ORDER BY r.document_type, r.recorded_ms DESC, r.record_id DESC
                """, user)
            for row in rows {
                let (type, action, version, milliseconds) = try row.decode(String.self, String.self, String.self, Int64.self)
                guard let action = AcceptanceAction(rawValue: action) else { continue }
                last[type] = .init(action: action, version: version, recordedAt: Date(millisecondsSince1970: milliseconds))
            }
            return try LegalDocumentType.allCases.map { type in
                AcceptanceRules.status(
                    of: type, versions: try catalog.versions(of: type, on: db), last: last[type.rawValue], now: now)
            }
        }
    }

    /// Newest first; `before` is the `next` of the previous page (`<ms>.<record id>`).
    func history(_ request: AuditHistory.Request) async throws -> AuditHistory.Reply {
        try PageLimit.auditHistory.validate(request.limit)
        var cursor: (Int64, UUID) = (Int64.max, UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)))
        if let before = request.before {
            let parts = before.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, let milliseconds = Int64(parts[0]), let id = UUID(uuidString: String(parts[1])) else {
                throw BusError(.invalidArgument, "before is not a cursor this service returned")
            }
            cursor = (milliseconds, id)
        }
        let (beforeMilliseconds, beforeID) = cursor
        return try await pool.withConnection { db in
            let rows = try db.query(
                """
                SELECT \(BatchWriter.receiptColumns), r.client_ip, r.user_agent
                FROM audit.subjects s JOIN audit.records r ON r.subject = s.pseudonym
                WHERE s.user_id = $1 AND ($2::text IS NULL OR r.document_type = $2)
                  AND (r.recorded_ms, r.record_id) < ($3, $4)
                ORDER BY r.recorded_ms DESC, r.record_id DESC
                LIMIT $5
                """, request.userId, request.documentType?.rawValue, beforeMilliseconds, beforeID, request.limit + 1)
            var records: [AcceptanceRecord] = []
            for row in rows.prefix(request.limit) {
                records.append(
                    AcceptanceRecord(
                        receipt: try BatchWriter.receipt(row, from: 0), clientIP: try row.decode(String?.self, column: 9),
                        userAgent: try row.decode(String?.self, column: 10)))
            }
            let next =
                rows.count > request.limit
                ? records.last.map {
                    "\($0.receipt.recordedAt.millisecondsSince1970).\(Hex.uuid($0.receipt.recordId))"
                } : nil
            return AuditHistory.Reply(records: records, next: next)
        }
    }
}
