import Bus
import Contracts
import Crypto
import Foundation
import Hex
import Identity
import Postgres

extension DocumentsStore {
    /// Creates a link to a complete document; returns it with its token (shown once).
    func createLink(documentId: UUID, access: Access, expiresInSeconds: Int, maxUses: Int?) async throws -> (ShareLink, String) {
        let (documents, shareLinks) = (self.documents, self.shareLinks)
        let token = Self.newToken()
        let id = UUID()
        let link = try await pool.withTransaction { db in
            let document = try Self.locked(documentId, access, table: documents, on: db)
            guard document.state == .available else {
                throw BusError(document.state == .missing ? .gone : .conflict, "only a complete document can be shared")
            }
            let row = try db.query(
                """
                INSERT INTO \(shareLinks) (id, document_id, token_sha256, created_at, expires_at, max_uses)
                VALUES ($1, $2, $3, date_trunc('milliseconds', now()), date_trunc('milliseconds', now()) + make_interval(secs => $4), $5)
                RETURNING \(Self.linkColumns)
                """, id, documentId, Self.tokenHash(token), Double(expiresInSeconds), maxUses)[0]
            return try Self.link(row, uses: [])
        }
        return (link, token)
    }

    /// A document's links, oldest first, each with its use log.
    func links(of documentId: UUID, access: Access) async throws -> [ShareLink] {
        let (documents, shareLinks, shareUses) = (self.documents, self.shareLinks, self.shareUses)
        return try await pool.withConnection { db in
            guard try !db.query("SELECT 1 FROM \(documents) WHERE id = $1 AND \(Self.ownerClause(2))", documentId, access.ownerFilter).isEmpty
            else { throw Self.notFound(documentId) }
            let rows = try db.query(
                "SELECT \(Self.linkColumns) FROM \(shareLinks) WHERE document_id = $1 ORDER BY created_at, id", documentId)
            let uses = try db.query(
                """
                SELECT u.link_id, u.used_at, u.client_ip FROM \(shareUses) u JOIN \(shareLinks) l ON l.id = u.link_id
                WHERE l.document_id = $1 ORDER BY u.used_at, u.id
                """, documentId)
            var log: [UUID: [ShareLinkUse]] = [:]
            for use in uses {
                let (link, at, ip) = try use.decode(UUID.self, Date.self, String?.self)
                log[link, default: []].append(ShareLinkUse(usedAt: at, clientIP: ip))
            }
            return try rows.map { row in try Self.link(row, uses: log[try row.decode(UUID.self, column: 0)] ?? []) }
        }
    }

    /// Revokes a link (the first revocation's time stays).
    func revoke(linkId: UUID, access: Access) async throws -> ShareLink {
        let (documents, shareLinks) = (self.documents, self.shareLinks)
        return try await pool.withConnection { db in
            let sql = """
                UPDATE \(shareLinks) l SET revoked_at = coalesce(l.revoked_at, date_trunc('milliseconds', now()))
                FROM \(documents) d WHERE l.id = $1 AND d.id = l.document_id AND ($2::uuid IS NULL OR d.owner_id = $2)
                RETURNING \(Self.linkColumns.split(separator: ",").map { "l." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))
                """
            guard let row = try db.query(sql, linkId, access.ownerFilter).first else {
                throw BusError(.notFound, "Share link not found: \(linkId.uuidString.lowercased())")
            }
            return try Self.link(row, uses: [])
        }
    }

    /// Uses a link: checks it, counts and logs the use, and returns the document and the grant.
    func open(token: String, clientIP: String?, grantLifetimeSeconds: Double) async throws -> (StoredDocument, UUID, Date) {
        let (documents, shareLinks, shareUses) = (self.documents, self.shareLinks, self.shareUses)
        let grant = UUID()
        return try await pool.withTransaction { db in
            let sql = """
                SELECT id, document_id, revoked_at IS NOT NULL, expires_at <= now(), max_uses IS NOT NULL AND uses >= max_uses
                FROM \(shareLinks) WHERE token_sha256 = $1 FOR UPDATE
                """
            guard let row = try db.query(sql, Self.tokenHash(token)).first else { throw BusError(.notFound, "Share link not found") }
            let (link, documentId, revoked, expired, exhausted) = try row.decode(UUID.self, UUID.self, Bool.self, Bool.self, Bool.self)
            if revoked { throw BusError(.gone, "the share link was revoked") }
            if expired { throw BusError(.gone, "the share link expired") }
            if exhausted { throw BusError(.gone, "the share link has been used as often as it allows") }
            let document = try Self.locked(documentId, .any, table: documents, on: db)
            guard document.state == .available else { throw BusError(.gone, "File no longer available") }
            try db.execute("UPDATE \(shareLinks) SET uses = uses + 1 WHERE id = $1", link)
            let usedAt = try db.query(
                "INSERT INTO \(shareUses) (id, link_id, used_at, client_ip) VALUES ($1, $2, date_trunc('milliseconds', now()), $3) RETURNING used_at",
                grant, link, clientIP)[0].decode(Date.self, column: 0)
            return (document, grant, usedAt.addingTimeInterval(grantLifetimeSeconds))
        }
    }

    static let linkColumns = "id, document_id, created_at, expires_at, max_uses, uses, revoked_at"

    static func link(_ row: PostgresRow, uses: [ShareLinkUse]) throws -> ShareLink {
        let (id, document, created, expires, maxUses, count, revoked) = try row.decode(
            UUID.self, UUID.self, Date.self, Date.self, Int?.self, Int.self, Date?.self)
        return ShareLink(
            id: id, documentId: document, createdAt: created, expiresAt: expires, maxUses: maxUses, uses: count, revokedAt: revoked,
            useLog: uses)
    }

    /// 256 random bits, base64url without padding.
    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Base64URL.encode(bytes)
    }

    /// Only this is stored: a 256-bit random token needs no salt or slow hash.
    static func tokenHash(_ token: String) -> String { Hex.string(Crypto.SHA256.hash(data: Data(token.utf8))) }
}
