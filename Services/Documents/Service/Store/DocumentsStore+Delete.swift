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
    /// Deletes one document: its row, its share links (cascade) and its bytes (a large object
    /// unlinked; an object queued in `object_removals`), in one transaction. Returns how many share
    /// links went with it.
    func delete(_ id: UUID, access: Access) async throws -> Int {
        let (documents, shareLinks, store) = (self.documents, self.shareLinks, self)
        let removed = try await pool.withTransaction { db in
            let document = try Self.locked(id, access, table: documents, on: db)
            let links = try db.query("SELECT count(*)::bigint FROM \(shareLinks) WHERE document_id = $1", id)[0].decode(Int.self, column: 0)
            try db.execute("DELETE FROM \(documents) WHERE id = $1", id)
            try store.removeBytes(of: document, on: db)
            return links
        }
        hashes.forget(id)
        return removed
    }

    /// Removes (or queues) a deleted row's bytes, on the deleting transaction. An object is only
    /// queued, so without a bucket configured it still waits safely in the queue.
    func removeBytes(of document: StoredDocument, on db: isolated PostgresConnection) throws {
        switch document.location {
        case .largeObject: try largeObjects.remove(document, on: db)
        case .object(let key):
            try db.execute(
                "INSERT INTO \(objectRemovals) (object_key, multipart_upload_id) VALUES ($1, $2)", key, document.multipartUploadId)
        }
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

    /// Deletes every document of `owner` (rows and, by cascade, links) on the caller's transaction
    /// (the event consumer's, which also advances its cursor), queues their large objects in
    /// `large_object_removals` for ``unlinkQueuedLargeObjects(limit:)`` and their objects in
    /// `object_removals` for ``ObjectRemovalSweeper``, and records the counts (documents and bytes
    /// wherever they were kept) once
    /// in `account_cleanups`. Unlinking here would take one lock per large object in this one
    /// transaction: a user with many documents would exceed the lock table.
    func deleteAll(of owner: UUID, deletedAt: Date, on db: isolated PostgresConnection) throws -> CleanupCounts {
        let (count, bytes) = try db.query(
            "SELECT count(*)::bigint, coalesce(sum(committed), 0)::bigint FROM \(documents) WHERE owner_id = $1", owner
        )[0].decode(Int.self, Int64.self)
        let links = try db.query(
            "SELECT count(*)::bigint FROM \(shareLinks) l JOIN \(documents) d ON d.id = l.document_id WHERE d.owner_id = $1", owner
        )[0].decode(Int.self, column: 0)
        try db.execute(
            """
            WITH gone AS (DELETE FROM \(documents) WHERE owner_id = $1 RETURNING lo_oid, object_key, multipart_upload_id),
            unlinks AS (
                INSERT INTO \(removals) (lo_oid) SELECT DISTINCT lo_oid FROM gone WHERE lo_oid IS NOT NULL ON CONFLICT (lo_oid) DO NOTHING)
            INSERT INTO \(objectRemovals) (object_key, multipart_upload_id) SELECT object_key, multipart_upload_id FROM gone
            WHERE object_key IS NOT NULL
            """, owner)
        try db.execute(
            """
            INSERT INTO \(cleanups) (user_id, deleted_at, documents, bytes, share_links) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (user_id) DO NOTHING
            """, owner, deletedAt, count, bytes, links)
        return CleanupCounts(documents: count, bytes: bytes, shareLinks: links)
    }

    /// Unlinks up to `limit` queued large objects (those that still exist) and dequeues them, in
    /// one transaction; returns how many were dequeued. Rows another instance holds are skipped.
    func unlinkQueuedLargeObjects(limit: Int) async throws -> Int {
        let removals = self.removals
        return try await pool.withTransaction { db in
            let oids = try db.query(
                "SELECT lo_oid FROM \(removals) ORDER BY lo_oid LIMIT $1 FOR UPDATE SKIP LOCKED", limit
            ).map { try $0.decode(Int64.self, column: 0) }
            guard !oids.isEmpty else { return 0 }
            let list = "{" + oids.map(String.init).joined(separator: ",") + "}"
            try db.query(
                """
                SELECT lo_unlink(m.oid) FROM pg_largeobject_metadata m WHERE m.oid = ANY ($1::bigint[]::oid[])
                """, list)
            try db.execute("DELETE FROM \(removals) WHERE lo_oid = ANY ($1::bigint[])", list)
            return oids.count
        }
    }
}
