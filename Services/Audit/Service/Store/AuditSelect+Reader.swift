import Bus
import Contracts
import Foundation
import Postgres
import ServiceKit

extension AuditReader {
    /// `/rest/v1/legal_acceptances` columns as SQL over a subject's records: a fixed list, the
    /// only SQL a query's column names can reach.
    static let restColumns = RestSQL(
        schema: RestTables.legalAcceptances,
        expressions: [
            "id": "r.record_id", "user_id": "s.user_id", "document_type": "r.document_type", "version": "r.version",
            "action": "r.action", "accepted_at": "r.recorded_at", "content_sha256": "r.digest",
        ])

    /// The user's records `query` selects, in its order then newest first, at most `query.limit`;
    /// and, when `query.count`, how many match. One snapshot for both statements.
    func select(_ request: AuditSelect.Request) async throws -> AuditSelect.Reply {
        let statement = try Self.restColumns.statement(request.query, firstParameter: 2)
        let scope = "FROM audit.subjects s JOIN audit.records r ON r.subject = s.pseudonym WHERE s.user_id = $1 AND \(statement.condition)"
        let order = (statement.orderBy + ["r.recorded_ms DESC", "r.record_id DESC"]).joined(separator: ", ")
        let parameters: [(any PostgresEncodable)?] = [request.userId] + statement.parameters
        return try await pool.withTransaction { db in
            try db.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            var receipts: [ConsentReceipt] = []
            if request.query.limit > 0 {
                let rows = try db.query(
                    "SELECT \(BatchWriter.receiptColumns) \(scope) ORDER BY \(order) \(statement.limitOffset)", parameters: parameters)
                receipts = try rows.map { try BatchWriter.receipt($0, from: 0) }
            }
            var total: Int?
            if request.query.count {
                // LIMIT and OFFSET are the last two parameters: the count binds the others.
                total = try db.query("SELECT count(*)::bigint \(scope)", parameters: Array(parameters.dropLast(2)))[0].decode(Int.self, column: 0)
            }
            return AuditSelect.Reply(receipts: receipts, total: total)
        }
    }
}
