import Bus
import Contracts
import Crypto
import Foundation
import Hex
import Postgres

/// Bytes in PostgreSQL large objects (`DOCUMENTS_STORAGE=postgres`, the default): each chunk is
/// written into the document's large object and its offset committed in the same transaction,
/// so a chunk is wholly committed or not at all.
struct LargeObjectBytes: DocumentBytes {
    let pool: PostgresPool
    /// `<schema>.documents`.
    let documents: String
    let hashes: RunningHashes
    let chunkSize: Int

    func append(_ id: UUID, offset: Int64, chunk: Data, access: Access) async throws -> StoredDocument {
        let (documents, hashes, chunkSize) = (self.documents, self.hashes, self.chunkSize)
        let (document, hash) = try await pool.withTransaction { db -> (StoredDocument, Crypto.SHA256?) in
            var document = try DocumentsStore.locked(id, access, table: documents, on: db)
            let end = try AppendRules.check(document, offset: offset, count: chunk.count)
            guard case .largeObject(let oid) = document.location else { throw AppendRules.moved(id) }
            let object = try db.openLargeObject(oid, mode: .readWrite)
            var hash = try hashes.state(of: id, at: offset) ?? Self.rehash(object, upTo: offset, chunkSize: chunkSize)
            // One memory copy (libpq's writer takes an array); a generic `[UInt8](chunk)` walks the bytes.
            let bytes = [UInt8](unsafeUninitializedCapacity: chunk.count) { buffer, count in count = chunk.copyBytes(to: buffer) }
            try object.seek(to: offset)
            guard try object.write(bytes) == bytes.count else { throw BusError(.internal, "short write to the large object") }
            hash.update(data: bytes)
            try AppendRules.checkType(document, offset: offset, end: end) {
                try object.seek(to: 0)
                return try object.read(upTo: MagicNumbers.headerLength)
            }
            document.committed = end
            guard end == document.length else {
                document.updatedAt = try db.query(
                    "UPDATE \(documents) SET committed = $2, updated_at = clock_timestamp() WHERE id = $1 RETURNING updated_at", id, end
                )[0].decode(Date.self, column: 0)
                return (document, hash)
            }
            document.sha256 = Hex.string(hash.finalize())
            document.state = .available
            if document.fileType == "application/pdf" {
                try object.seek(to: max(0, end - Int64(MagicNumbers.pdfTailLength)))
                document.possiblyCorrupt = !MagicNumbers.looksComplete(pdfTail: try object.read(upTo: MagicNumbers.pdfTailLength))
            }
            try db.execute(
                """
                UPDATE \(documents) SET committed = $2, sha256 = $3, state = 'available', possibly_corrupt = $4, updated_at = clock_timestamp()
                WHERE id = $1
                """,
                id, end, document.sha256, document.possiblyCorrupt)
            return (document, nil)
        }
        if let hash { hashes.remember(hash, of: id, at: document.committed) } else { hashes.forget(id) }
        return document
    }

    func read(_ document: StoredDocument, offset: Int64, length: Int) async throws -> Data {
        guard case .largeObject(let oid) = document.location else { throw AppendRules.moved(document.id) }
        return try await pool.withTransaction { db in
            // Gone since the row was read (deleted, or moved to S3 and unlinked): as a missing large object.
            guard try Self.exists(oid, on: db) else { throw BusError(.gone, "File no longer available") }
            let object = try db.openLargeObject(oid, mode: .read)
            try object.seek(to: offset)
            return Data(try object.read(upTo: Int(min(Int64(length), document.length - offset))))
        }
    }

    func remove(_ document: StoredDocument, on db: isolated PostgresConnection) throws {
        guard case .largeObject(let oid) = document.location else { return }
        if try Self.exists(oid, on: db) { try db.unlinkLargeObject(oid) }
    }

    /// Creates the empty large object of a new document, on its creating transaction.
    static func create(on db: isolated PostgresConnection) throws -> UInt32 { try db.createLargeObject() }

    /// Whether large object `oid` still exists (it can be gone while its row is not).
    static func exists(_ oid: UInt32, on db: isolated PostgresConnection) throws -> Bool {
        try db.query("SELECT EXISTS (SELECT 1 FROM pg_largeobject_metadata WHERE oid = $1::bigint::oid)", Int64(oid))[0]
            .decode(Bool.self, column: 0)
    }

    /// The hash state after the first `end` stored bytes, read back a chunk at a time.
    static func rehash(_ object: LargeObject, upTo end: Int64, chunkSize: Int) throws -> Crypto.SHA256 {
        var hash = Crypto.SHA256()
        try object.seek(to: 0)
        var done: Int64 = 0
        while done < end {
            let piece = try object.read(upTo: Int(min(Int64(chunkSize), end - done)))
            guard !piece.isEmpty else { throw BusError(.internal, "stored bytes end before the committed offset") }
            hash.update(data: piece)
            done += Int64(piece.count)
        }
        return hash
    }
}
