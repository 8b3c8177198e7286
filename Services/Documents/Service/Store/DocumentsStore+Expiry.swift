import Foundation
import Postgres

extension DocumentsStore {
    /// Deletes up to `limit` uploads that received no chunk for `idleSeconds` (rows, large
    /// objects, staged chunks and parts in one transaction; an S3 multipart upload is queued to be
    /// aborted, with its object should it have been completed), so abandoned uploads do not hold their owners' quota forever
    /// (tus's expiration). Returns how many went.
    func sweepAbandonedUploads(idleSeconds: Double, limit: Int) async throws -> [UUID] {
        let (documents, store) = (self.documents, self)
        let swept = try await pool.withTransaction { db in
            let rows = try db.query(
                """
                SELECT \(StoredDocument.columns) FROM \(documents)
                WHERE state = 'uploading' AND updated_at < clock_timestamp() - make_interval(secs => $1)
                ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED
                """, idleSeconds, limit)
            var ids: [UUID] = []
            for row in rows {
                let document = try StoredDocument.decode(row)
                try db.execute("DELETE FROM \(documents) WHERE id = $1", document.id)
                try store.removeBytes(of: document, on: db)
                ids.append(document.id)
            }
            return ids
        }
        for id in swept { hashes.forget(id) }
        return swept
    }
}
