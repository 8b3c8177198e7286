import Bus
import Contracts
import Foundation
import Postgres

extension DocumentsStore {
    /// One page of an owner's documents for the data export: every state (unlike collections,
    /// which leave out uploads in progress), newest first by ``CollectionKey``, with the share links
    /// of the page's documents and their use logs. One read-only snapshot, so the links belong to
    /// exactly the documents listed.
    func export(owner: UUID, limit: Int, after: CollectionKey?) async throws -> (
        documents: [StoredDocument], links: [ShareLink], next: CollectionKey?
    ) {
        let (documents, shareLinks, shareUses) = (self.documents, self.shareLinks, self.shareUses)
        let sql = """
            SELECT \(StoredDocument.columns), \(Self.micros) FROM \(documents)
            WHERE owner_id = $1 AND ($2::bigint IS NULL OR \(Self.orderKey) < (\(Self.keyTime(2)), $3::uuid))
            ORDER BY created_at DESC, id DESC LIMIT $4
            """
        return try await pool.withTransaction { db in
            try db.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            let rows = try db.query(sql, owner, after?.createdMicros, after?.id, limit + 1)
            let (page, next) = try Self.keysetPage(rows, limit: limit)
            let ids = PostgresArrayLiteral.of(page.map { $0.id.uuidString.lowercased() })
            let linkRows = try db.query(
                "SELECT \(Self.linkColumns) FROM \(shareLinks) WHERE document_id = ANY ($1::uuid[]) ORDER BY document_id, created_at, id", ids)
            let uses = try db.query(
                """
                SELECT u.link_id, u.used_at, u.client_ip FROM \(shareUses) u JOIN \(shareLinks) l ON l.id = u.link_id
                WHERE l.document_id = ANY ($1::uuid[]) ORDER BY u.used_at, u.id
                """, ids)
            var log: [UUID: [ShareLinkUse]] = [:]
            for use in uses {
                let (link, at, ip) = try use.decode(UUID.self, Date.self, String?.self)
                log[link, default: []].append(ShareLinkUse(usedAt: at, clientIP: ip))
            }
            let links = try linkRows.map { row in try Self.link(row, uses: log[try row.decode(UUID.self, column: 0)] ?? []) }
            return (page, links, next)
        }
    }
}
