import Bus
import Contracts
import Foundation
import Postgres

/// Who reads: a principal (by ``Access``) or the holder of a share link's grant.
enum ReadAccess: Sendable {
    case principal(Access)
    /// A grant from `documents.share_open`, valid for `lifetimeSeconds` after the last request of its use.
    case grant(UUID, lifetimeSeconds: Double)
}

extension DocumentsStore {
    /// One document by id, when `access` may see it.
    func document(id: UUID, access: Access) async throws -> StoredDocument {
        let sql = "SELECT \(StoredDocument.columns) FROM \(documents) WHERE id = $1 AND \(Self.ownerClause(2))"
        guard let row = try await pool.withConnection({ db in try db.query(sql, id, access.ownerFilter).first.map(StoredDocument.decode) })
        else { throw Self.notFound(id) }
        return row
    }

    /// One document by its stored file URL (see ``FileURL/normalize(_:)``), when `access` may see it.
    func document(fileUrl: String, access: Access) async throws -> StoredDocument {
        let sql = "SELECT \(StoredDocument.columns) FROM \(documents) WHERE file_url = $1 AND \(Self.ownerClause(2))"
        guard let row = try await pool.withConnection({ db in try db.query(sql, fileUrl, access.ownerFilter).first.map(StoredDocument.decode) })
        else { throw BusError(.notFound, "Document not found for that file URL") }
        return row
    }

    /// Up to `length` bytes from `offset` of a complete document (empty at or past the end): the
    /// access checked, then the bytes read from where the row says.
    func read(_ id: UUID, offset: Int64, length: Int, access: ReadAccess) async throws -> (StoredDocument, Data) {
        let document = try await readable(id, access: access)
        guard offset < document.length else { return (document, Data()) }
        return (document, try await bytes(at: document.location).read(document, offset: offset, length: length))
    }

    /// The document if `access` may read it now and it is complete.
    private func readable(_ id: UUID, access: ReadAccess) async throws -> StoredDocument {
        let (documents, shareLinks, shareUses) = (self.documents, self.shareLinks, self.shareUses)
        return try await pool.withTransaction { db in
            let owner: UUID?
            switch access {
            case .principal(let access): owner = access.ownerFilter
            case .grant(let grant, let lifetime):
                owner = nil
                let check = """
                    SELECT l.revoked_at IS NOT NULL, u.last_request_at + make_interval(secs => $3) <= now()
                    FROM \(shareUses) u JOIN \(shareLinks) l ON l.id = u.link_id WHERE u.id = $1 AND l.document_id = $2
                    """
                guard let row = try db.query(check, grant, id, lifetime).first else { throw Self.notFound(id) }
                let (revoked, expired) = try row.decode(Bool.self, Bool.self)
                if revoked { throw BusError(.gone, "the share link was revoked") }
                if expired { throw BusError(.gone, "the share grant expired; open the link again") }
            }
            let sql = "SELECT \(StoredDocument.columns) FROM \(documents) WHERE id = $1 AND \(Self.ownerClause(2))"
            guard let row = try db.query(sql, id, owner).first else { throw Self.notFound(id) }
            let document = try StoredDocument.decode(row)
            switch document.state {
            case .uploading:
                throw BusError(.conflict, "the document is still uploading", details: ["offset": "\(document.committed)"])
            case .missing:
                throw BusError(.gone, "File no longer available")
            case .available: break
            }
            // `missing` above already covers a large object that is gone (StoredDocument.columns).
            return document
        }
    }
}
