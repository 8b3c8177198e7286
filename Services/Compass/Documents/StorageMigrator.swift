import Crypto
import Foundation
import ObjectStorage
import Postgres

/// Moves complete documents' bytes between PostgreSQL large objects and the bucket, one row at a
/// time, for `compass documents migrate-storage`.
///
/// Each row is copied inside one transaction that holds its row lock (`FOR UPDATE SKIP LOCKED`:
/// a row another migrator or a deletion holds is left for a later pass). The copy is read back
/// from its new place and its size and SHA-256 checked against the row before the row is switched
/// in the same transaction, and the old bytes are queued for removal the way Documents' own
/// deletions queue them (`large_object_removals`, `object_removals`), so a read that found the
/// old place just before the switch still finds the bytes there. Until the commit the row is
/// unchanged and readers keep reading the old copy; a crash before it leaves the row where it was
/// and at worst an object no row names, which Documents' orphan sweep removes (a large object
/// made by the rolled-back transaction goes with it). Deleting the row being copied waits for the
/// copy (Documents answers 503 with Retry-After meanwhile).
struct StorageMigrator {
    enum Direction: String, CaseIterable, Sendable {
        case toS3 = "s3"
        case toPostgres = "postgres"
        var source: String { self == .toS3 ? "postgres" : "s3" }
    }

    /// A row taken for its move.
    struct Row: Sendable {
        let id: UUID
        let owner: UUID
        let largeObject: Int64?
        let objectKey: String?
        let length: Int64
        let sha256: String?
    }

    enum Outcome: Sendable {
        case moved(Row)
        /// The bytes did not match the row (or are gone): the row stays where it is.
        case refused(Row, reason: String)
    }

    let connection: PostgresConnection
    let client: S3Client
    let direction: Direction
    /// Bytes per S3 part and per large-object read or write: what one step holds in memory.
    let partSize: Int
    let table = "documents.documents"

    /// The complete documents still on the source store, and their bytes.
    func remaining() async throws -> (count: Int, bytes: Int64) {
        let (table, source) = (self.table, direction.source)
        return try await connection.run { db in
            try db.query(
                "SELECT count(*)::bigint, coalesce(sum(length), 0)::bigint FROM \(table) WHERE storage = $1 AND state = 'available'", source
            )[0].decode(Int.self, Int64.self)
        }
    }

    /// Moves the first unlocked complete row after `cursor` (ids in order); nil when none is left.
    func moveNext(after cursor: UUID?) async throws -> Outcome? {
        let (table, source) = (self.table, direction.source)
        let row: Row? = try await connection.run { db in
            try db.execute("BEGIN")
            let rows = try db.query(
                """
                SELECT id, owner_id, lo_oid, object_key, length, sha256 FROM \(table)
                WHERE storage = $1 AND state = 'available' AND ($2::uuid IS NULL OR id > $2::uuid)
                ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED
                """, source, cursor)
            guard let first = rows.first else {
                try db.execute("ROLLBACK")
                return nil
            }
            let (id, owner, oid, key, length, sha) = try first.decode(UUID.self, UUID.self, Int64?.self, String?.self, Int64.self, String?.self)
            return Row(id: id, owner: owner, largeObject: oid, objectKey: key, length: length, sha256: sha)
        }
        guard let row else { return nil }
        do {
            let outcome = try await direction == .toS3 ? toS3(row) : toPostgres(row)
            try await connection.run { db in try db.execute(outcomeIsMove(outcome) ? "COMMIT" : "ROLLBACK") }
            return outcome
        } catch {
            _ = try? await connection.run { db in try db.execute("ROLLBACK") }
            throw error
        }
    }

    private func outcomeIsMove(_ outcome: Outcome) -> Bool {
        if case .moved = outcome { return true }
        return false
    }

    /// The object key Documents gives a document (ByteLocation.objectKey): by owner, so an
    /// account's objects are listed by prefix when it is deleted.
    static func objectKey(owner: UUID, id: UUID) -> String {
        "documents/\(owner.uuidString.lowercased())/\(id.uuidString.lowercased())"
    }

    // MARK: PostgreSQL → S3

    private func toS3(_ row: Row) async throws -> Outcome {
        guard let oid = row.largeObject.flatMap({ UInt32(exactly: $0) }) else { return .refused(row, reason: "no large object") }
        let exists = try await connection.run { db in
            !(try db.query("SELECT 1 FROM pg_largeobject_metadata WHERE oid = $1::bigint::oid", Int64(oid)).isEmpty)
        }
        guard exists else { return .refused(row, reason: "its large object is gone") }
        let key = Self.objectKey(owner: row.owner, id: row.id)
        if row.length <= Int64(partSize) {
            try await client.putObject(key: key, bytes: try await readLargeObject(oid, at: 0, count: Int(row.length)))
        } else {
            // A run killed mid-copy left its multipart upload open: a complete document has no
            // upload of its own in progress, so any under its key is ours to abort.
            for upload in try await client.listMultipartUploads(prefix: key) where upload.key == key {
                try? await client.abortMultipartUpload(key: key, uploadId: upload.uploadId)
            }
            let uploadId = try await client.createMultipartUpload(key: key)
            do {
                var parts: [S3CompletedPart] = []
                var offset: Int64 = 0
                while offset < row.length {
                    let bytes = try await readLargeObject(oid, at: offset, count: Int(min(Int64(partSize), row.length - offset)))
                    let etag = try await client.uploadPart(key: key, uploadId: uploadId, partNumber: parts.count + 1, bytes: bytes)
                    parts.append(S3CompletedPart(partNumber: parts.count + 1, etag: etag))
                    offset += Int64(bytes.count)
                }
                _ = try await client.completeMultipartUpload(key: key, uploadId: uploadId, parts: parts)
            } catch {
                try? await client.abortMultipartUpload(key: key, uploadId: uploadId)
                throw error
            }
        }
        // Read back from the bucket: what the row will point at is what is checked.
        var hash = Crypto.SHA256()
        var offset: Int64 = 0
        while offset < row.length {
            let end = min(offset + Int64(partSize), row.length) - 1
            let bytes = try await client.getObject(key: key, range: offset...end)
            guard !bytes.isEmpty else { break }
            hash.update(data: bytes)
            offset += Int64(bytes.count)
        }
        let size = try await client.headObject(key: key)?.size
        if let refusal = Self.check(row, size: size ?? offset, digest: hash.finalize()) {
            // No row names this key (the row stays on PostgreSQL): the bad copy goes now.
            try? await client.deleteObject(key: key)
            return .refused(row, reason: refusal)
        }
        let table = self.table
        try await connection.run { db in
            try db.execute("UPDATE \(table) SET storage = 's3', object_key = $2, lo_oid = NULL WHERE id = $1", row.id, key)
            try db.execute(
                "INSERT INTO documents.large_object_removals (lo_oid) VALUES ($1) ON CONFLICT (lo_oid) DO NOTHING", Int64(oid))
        }
        return .moved(row)
    }

    /// `count` bytes of large object `oid` from `offset`, in the row's transaction.
    private func readLargeObject(_ oid: UInt32, at offset: Int64, count: Int) async throws -> [UInt8] {
        try await connection.run { db in
            let object = try db.openLargeObject(oid, mode: .read)
            defer { try? object.close() }
            _ = try object.seek(to: offset)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(count)
            while bytes.count < count {
                let piece = try object.read(upTo: count - bytes.count)
                if piece.isEmpty { break }
                bytes += piece
            }
            return bytes
        }
    }

    // MARK: S3 → PostgreSQL

    private func toPostgres(_ row: Row) async throws -> Outcome {
        guard let key = row.objectKey else { return .refused(row, reason: "no object key") }
        guard let head = try await client.headObject(key: key) else { return .refused(row, reason: "its object is gone") }
        guard head.size == row.length else { return .refused(row, reason: "the object has \(head.size) bytes, the row \(row.length)") }
        // Made in the row's transaction: a crash before the commit takes it away again.
        let oid = try await connection.run { db in try db.createLargeObject() }
        var offset: Int64 = 0
        while offset < row.length {
            let end = min(offset + Int64(partSize), row.length) - 1
            let bytes = try await client.getObject(key: key, range: offset...end)
            guard !bytes.isEmpty else { break }
            let at = offset
            try await connection.run { db in
                let object = try db.openLargeObject(oid, mode: .write)
                defer { try? object.close() }
                _ = try object.seek(to: at)
                var written = 0
                while written < bytes.count { written += try object.write(Array(bytes[written...])) }
            }
            offset += Int64(bytes.count)
        }
        // Read back from the large object, as above.
        var hash = Crypto.SHA256()
        var size: Int64 = 0
        while size < row.length {
            let bytes = try await readLargeObject(oid, at: size, count: Int(min(Int64(partSize), row.length - size)))
            if bytes.isEmpty { break }
            hash.update(data: bytes)
            size += Int64(bytes.count)
        }
        if let refusal = Self.check(row, size: size, digest: hash.finalize()) { return .refused(row, reason: refusal) }
        let table = self.table
        try await connection.run { db in
            try db.execute("UPDATE \(table) SET storage = 'postgres', lo_oid = $2, object_key = NULL WHERE id = $1", row.id, Int64(oid))
            try db.execute("INSERT INTO documents.object_removals (object_key) VALUES ($1)", key)
        }
        return .moved(row)
    }

    /// Why the copy may not replace the row's bytes, or nil when its size and SHA-256 match.
    static func check(_ row: Row, size: Int64, digest: SHA256.Digest) -> String? {
        guard size == row.length else { return "the copy has \(size) bytes, the row \(row.length)" }
        let hex = digest.map { String(format: "%02x", $0) }.joined()
        guard let expected = row.sha256 else { return "the row has no SHA-256 to check the copy against" }
        guard hex == expected.lowercased() else { return "the copy's SHA-256 \(hex) is not the row's \(expected)" }
        return nil
    }
}
