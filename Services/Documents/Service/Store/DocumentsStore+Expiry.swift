import Foundation
import Postgres

extension DocumentsStore {
    /// Deletes up to `limit` uploads that received no chunk for `idleSeconds` (rows and large
    /// objects, one transaction), so abandoned uploads do not hold their owners' quota forever
    /// (tus's expiration). Returns how many went.
    func sweepAbandonedUploads(idleSeconds: Double, limit: Int) async throws -> [UUID] {
        let documents = self.documents
        let swept = try await pool.withTransaction { db in
            let rows = try db.query(
                """
                SELECT id, lo_oid FROM \(documents)
                WHERE state = 'uploading' AND updated_at < clock_timestamp() - make_interval(secs => $1)
                ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED
                """, idleSeconds, limit)
            var ids: [UUID] = []
            for row in rows {
                let (id, oid) = try row.decode(UUID.self, Int64.self)
                try db.execute("DELETE FROM \(documents) WHERE id = $1", id)
                if let oid = UInt32(exactly: oid), try Self.largeObjectExists(oid, on: db) { try db.unlinkLargeObject(oid) }
                ids.append(id)
            }
            return ids
        }
        for id in swept { hashes.forget(id) }
        return swept
    }
}
