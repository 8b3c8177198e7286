import Bus
import Contracts
import Foundation
import Postgres

/// What deleting a user's documents removed.
struct CleanupCounts: Sendable, Equatable {
    var documents: Int
    var bytes: Int64
    var shareLinks: Int
}

extension DocumentsStore {
    /// Deletes one document: its row, its share links (cascade) and its large object, in one
    /// transaction. Returns how many share links went with it.
    func delete(_ id: UUID, access: Access) async throws -> Int {
        let (documents, shareLinks) = (self.documents, self.shareLinks)
        let removed = try await pool.withTransaction { db in
            let document = try Self.locked(id, access, table: documents, on: db)
            let links = try db.query("SELECT count(*)::bigint FROM \(shareLinks) WHERE document_id = $1", id)[0].decode(Int.self, column: 0)
            try db.execute("DELETE FROM \(documents) WHERE id = $1", id)
            if try Self.largeObjectExists(document.largeObject, on: db) { try db.unlinkLargeObject(document.largeObject) }
            return links
        }
        hashes.forget(id)
        return removed
    }

    /// What `documents.usage` reports for one user.
    func usage(of owner: UUID) async throws -> DocumentsUsage.Reply {
        let (documents, shareLinks) = (self.documents, self.shareLinks)
        return try await pool.withConnection { db in
            let (count, bytes) = try db.query(
                "SELECT count(*)::bigint, coalesce(sum(committed), 0)::bigint FROM \(documents) WHERE owner_id = $1", owner
            )[0].decode(Int.self, Int64.self)
            let (links, active) = try db.query(
                """
                SELECT count(*)::bigint,
                       count(*) FILTER (WHERE l.revoked_at IS NULL AND l.expires_at > now() AND (l.max_uses IS NULL OR l.uses < l.max_uses))::bigint
                FROM \(shareLinks) l JOIN \(documents) d ON d.id = l.document_id WHERE d.owner_id = $1
                """, owner)[0].decode(Int.self, Int.self)
            return DocumentsUsage.Reply(userId: owner, documents: count, bytes: bytes, activeShareLinks: active, shareLinks: links)
        }
    }

    /// Deletes every document of `owner` (rows, links, large objects) on the caller's transaction
    /// (the event consumer's, which also advances its cursor) and records the counts once in
    /// `account_cleanups`.
    func deleteAll(of owner: UUID, deletedAt: Date, on db: isolated PostgresConnection) throws -> CleanupCounts {
        let (count, bytes) = try db.query(
            "SELECT count(*)::bigint, coalesce(sum(committed), 0)::bigint FROM \(documents) WHERE owner_id = $1", owner
        )[0].decode(Int.self, Int64.self)
        let links = try db.query(
            "SELECT count(*)::bigint FROM \(shareLinks) l JOIN \(documents) d ON d.id = l.document_id WHERE d.owner_id = $1", owner
        )[0].decode(Int.self, column: 0)
        try db.query(
            """
            SELECT lo_unlink(m.oid) FROM \(documents) d JOIN pg_largeobject_metadata m ON m.oid = d.lo_oid::oid WHERE d.owner_id = $1
            """, owner)
        try db.execute("DELETE FROM \(documents) WHERE owner_id = $1", owner)
        try db.execute(
            """
            INSERT INTO \(cleanups) (user_id, deleted_at, documents, bytes, share_links) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (user_id) DO NOTHING
            """, owner, deletedAt, count, bytes, links)
        return CleanupCounts(documents: count, bytes: bytes, shareLinks: links)
    }
}
