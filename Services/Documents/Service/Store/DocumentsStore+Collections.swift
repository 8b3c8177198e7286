import Bus
import Contracts
import Foundation
import Postgres

/// A place in a collection's order: `created_at` (microseconds since 1970, exact) then id, both
/// descending. Cursors are this pair as text, opaque to callers.
struct CollectionKey: Sendable, Equatable {
    var createdMicros: Int64
    var id: UUID

    var cursor: String { "\(createdMicros)_\(id.uuidString.lowercased())" }

    init(createdMicros: Int64, id: UUID) {
        self.createdMicros = createdMicros
        self.id = id
    }

    init?(cursor: String) {
        let parts = cursor.split(separator: "_")
        guard parts.count == 2, let micros = Int64(parts[0]), let id = UUID(uuidString: String(parts[1])) else { return nil }
        self.init(createdMicros: micros, id: id)
    }
}

extension DocumentsStore {
    /// Collections hold documents whose bytes are complete (or gone): an upload in progress
    /// cannot be viewed yet. `$1` owner, `$2` type, `$3` school.
    static let collectionFilter = """
        owner_id = $1 AND ($2::text IS NULL OR type = $2) AND ($3::text IS NULL OR school_id = $3) AND state <> 'uploading'
        """
    /// The key expression of the order, and the timestamp a key's micros stand for.
    static let orderKey = "(created_at, id)"
    static func keyTime(_ parameter: Int) -> String { "(timestamptz 'epoch' + $\(parameter)::bigint * interval '1 microsecond')" }
    static let micros = "(extract(epoch FROM created_at) * 1000000)::bigint"

    /// One page of a keyset query that selected ``StoredDocument/columns`` and ``micros`` with a
    /// limit of `limit + 1`: the documents, and the key to continue after when there are more.
    static func keysetPage(_ rows: PostgresRows, limit: Int) throws -> (page: [StoredDocument], next: CollectionKey?) {
        var page: [StoredDocument] = []
        var keys: [CollectionKey] = []
        for row in rows {
            let document = try StoredDocument.decode(row)
            page.append(document)
            keys.append(CollectionKey(createdMicros: try row.decode(Int64.self, column: StoredDocument.columnCount), id: document.id))
        }
        guard page.count > limit else { return (page, nil) }
        page.removeLast()
        return (page, keys[limit - 1])
    }

    /// One page of the collection after `after` (exclusive), and the collection's size.
    func list(_ filter: CollectionFilter, limit: Int, after: CollectionKey?) async throws -> (
        page: [StoredDocument], next: CollectionKey?, total: Int
    ) {
        let documents = self.documents
        let filterSQL = Self.collectionFilter
        let sql = """
            SELECT \(StoredDocument.columns), \(Self.micros) FROM \(documents)
            WHERE \(filterSQL) AND ($4::bigint IS NULL OR \(Self.orderKey) < (\(Self.keyTime(4)), $5::uuid))
            ORDER BY created_at DESC, id DESC LIMIT $6
            """
        return try await pool.withConnection { db in
            let rows = try db.query(
                sql, filter.ownerId, filter.type?.rawValue, filter.schoolId, after?.createdMicros, after?.id, limit + 1)
            let (page, next) = try Self.keysetPage(rows, limit: limit)
            let total = try db.query(
                "SELECT count(*)::bigint FROM \(documents) WHERE \(filterSQL)", filter.ownerId, filter.type?.rawValue, filter.schoolId)[0]
                .decode(Int.self, column: 0)
            return (page, next, total)
        }
    }

    /// Where document `id` stands in the collection: 1-based position, size, neighbours. In one
    /// snapshot (a repeatable-read transaction), so the figures agree with each other.
    func position(of id: UUID, in filter: CollectionFilter) async throws -> DocumentsPosition.Reply {
        let documents = self.documents
        let filterSQL = Self.collectionFilter
        let after = "\(Self.orderKey) > (\(Self.keyTime(4)), $5)"
        let before = "\(Self.orderKey) < (\(Self.keyTime(4)), $5)"
        return try await pool.withTransaction { db in
            try db.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            let (owner, type, school) = (filter.ownerId, filter.type?.rawValue, filter.schoolId)
            guard
                let row = try db.query(
                    "SELECT \(Self.micros) FROM \(documents) WHERE id = $4 AND \(filterSQL)", owner, type, school, id
                ).first
            else { throw Self.notFound(id) }
            let micros = try row.decode(Int64.self, column: 0)
            let counts = try db.query(
                "SELECT count(*) FILTER (WHERE \(after))::bigint, count(*)::bigint FROM \(documents) WHERE \(filterSQL)",
                owner, type, school, micros, id)[0]
            let (ahead, total) = try counts.decode(Int.self, Int.self)
            let previous = try db.query(
                "SELECT id FROM \(documents) WHERE \(filterSQL) AND \(after) ORDER BY created_at, id LIMIT 1",
                owner, type, school, micros, id
            ).first?.decode(UUID.self, column: 0)
            let next = try db.query(
                "SELECT id FROM \(documents) WHERE \(filterSQL) AND \(before) ORDER BY created_at DESC, id DESC LIMIT 1",
                owner, type, school, micros, id
            ).first?.decode(UUID.self, column: 0)
            return DocumentsPosition.Reply(id: id, position: ahead + 1, total: total, previousId: previous, nextId: next)
        }
    }
}
