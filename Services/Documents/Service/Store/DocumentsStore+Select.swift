import Bus
import Contracts
import Foundation
import Postgres
import ServiceKit

extension DocumentsStore {
    /// `/rest/v1/documents` columns as SQL over `documents`: a fixed list, the only SQL a query's
    /// column names can reach. The seed's computed flags are the same rules as
    /// ``Document/flags(type:fileType:)``, in SQL, so they filter and sort in the database.
    static let restColumns = RestSQL(
        schema: RestTables.documents,
        expressions: [
            "id": "id", "user_id": "owner_id", "type": "type", "title": "title", "description": "description",
            "file_url": "file_url", "file_type": "file_type", "file_size": "length", "version": "version",
            "school_id": "school_id", "created_at": "created_at", "sha256": "sha256", "bytes_state": StoredDocument.stateExpression,
            "possibly_corrupt": "possibly_corrupt", "is_video": isVideo, "is_image": isImage, "is_pdf": isPDF,
            "can_preview": "(\(isVideo) OR \(isImage) OR \(isPDF))",
        ])
    static let isVideo = "(type = 'highlight_video' OR COALESCE(strpos(file_type, 'video') > 0, false))"
    static let isImage = "COALESCE(strpos(file_type, 'image') > 0, false)"
    static let isPDF = "COALESCE(file_type = 'application/pdf', false)"

    /// The owner's documents `query` selects, in its order then newest first (the collections'
    /// order, so ties are stable), at most `query.limit`; and, when `query.count`, how many match.
    /// Uploads in progress are not shown, as in collections. One snapshot for both statements.
    func select(owner: UUID, _ query: RestQuery) async throws -> (documents: [StoredDocument], total: Int?) {
        let statement = try Self.restColumns.statement(query, firstParameter: 2)
        let documents = self.documents
        let scope = "owner_id = $1 AND state <> 'uploading' AND \(statement.condition)"
        let order = (statement.orderBy + ["created_at DESC", "id DESC"]).joined(separator: ", ")
        let parameters: [(any PostgresEncodable)?] = [owner] + statement.parameters
        return try await pool.withTransaction { db in
            try db.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            var rows: [StoredDocument] = []
            if query.limit > 0 {
                let sql = "SELECT \(StoredDocument.columns) FROM \(documents) WHERE \(scope) ORDER BY \(order) \(statement.limitOffset)"
                rows = try db.query(sql, parameters: parameters).map(StoredDocument.decode)
            }
            var total: Int?
            if query.count {
                // LIMIT and OFFSET are the last two parameters: the count binds the others.
                total = try db.query("SELECT count(*)::bigint FROM \(documents) WHERE \(scope)", parameters: Array(parameters.dropLast(2)))[0]
                    .decode(Int.self, column: 0)
            }
            return (rows, total)
        }
    }
}
