import Bus
import Contracts
import Foundation
import ObjectStorage
import Postgres

/// The SQL of the Documents service over `documents`, `share_links`, `share_link_uses` and
/// `account_cleanups`; the bytes are behind ``DocumentBytes`` (`Storage/`), per row. Uploads in
/// `DocumentsStore+Upload.swift`, reads and look-ups in `+Read`, collections in `+Collections`,
/// deletion, usage and the queue of large objects to unlink (`large_object_removals`) in `+Delete`, share links in `+Share`. The schema is spliced in after
/// validation (qualified names cannot be parameters); every value is a parameter.
public struct DocumentsStore: Sendable {
    public let pool: PostgresPool
    /// Largest chunk written or read at once: the unit of memory a transfer takes.
    let chunkSize: Int
    /// How long an unfinished upload lives after its last chunk (reported as `expiresAt`).
    let uploadExpiry: Duration
    let documents: String
    let shareLinks: String
    let shareUses: String
    let cleanups: String
    let removals: String
    let objectRemovals: String
    let hashes: RunningHashes
    /// Where new uploads go (`DOCUMENTS_STORAGE`).
    let newUploads: StorageKind
    let largeObjects: LargeObjectBytes
    /// Present when the deployment has a bucket (new uploads go there, or older rows are there).
    let objects: ObjectStoreBytes?

    public init(
        pool: PostgresPool, schema: String = DocumentsServiceDescription.name, chunkSize: Int, uploadExpiry: Duration,
        newUploads: StorageKind = .postgres, objectStore: S3Client? = nil, partSize: Int = 8 << 20
    ) {
        precondition(
            schema.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) } && !schema.isEmpty,
            "invalid schema name \(schema)")
        self.pool = pool
        self.chunkSize = chunkSize
        self.uploadExpiry = uploadExpiry
        self.documents = "\(schema).documents"
        self.shareLinks = "\(schema).share_links"
        self.shareUses = "\(schema).share_link_uses"
        self.cleanups = "\(schema).account_cleanups"
        self.removals = "\(schema).large_object_removals"
        self.objectRemovals = "\(schema).object_removals"
        let hashes = RunningHashes()
        self.hashes = hashes
        precondition(newUploads == .postgres || objectStore != nil, "s3 storage needs a client")
        self.newUploads = newUploads
        self.largeObjects = LargeObjectBytes(pool: pool, documents: documents, hashes: hashes, chunkSize: chunkSize)
        self.objects = objectStore.map {
            ObjectStoreBytes(pool: pool, client: $0, schema: schema, hashes: hashes, partSize: partSize)
        }
    }

    /// The implementation holding bytes at `location`.
    func bytes(at location: ByteLocation) throws -> any DocumentBytes {
        switch location {
        case .largeObject: return largeObjects
        case .object:
            guard let objects else {
                throw BusError(.unavailable, "this document's bytes are in object storage, which this deployment does not configure (DOCUMENTS_S3_*)")
            }
            return objects
        }
    }

    /// `documents` rows match the access: `$N::uuid IS NULL OR owner_id = $N`.
    static func ownerClause(_ parameter: Int) -> String { "($\(parameter)::uuid IS NULL OR owner_id = $\(parameter))" }

    static func notFound(_ id: UUID) -> BusError { BusError(.notFound, "Document not found: \(id.uuidString.lowercased())") }

    /// The document locked for update (`FOR UPDATE`), when `access` may see it.
    static func locked(_ id: UUID, _ access: Access, table: String, on db: isolated PostgresConnection) throws -> StoredDocument {
        let sql = "SELECT \(StoredDocument.columns) FROM \(table) WHERE id = $1 AND \(ownerClause(2)) FOR UPDATE"
        guard let row = try db.query(sql, id, access.ownerFilter).first else { throw notFound(id) }
        return try StoredDocument.decode(row)
    }
}
