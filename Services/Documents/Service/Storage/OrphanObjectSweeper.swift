import Foundation
import Logging
import ObjectStorage
import Postgres
import ServiceKit
import ServiceLifecycle

/// Every `interval`, lists the bucket under `documents/` and deletes each object older than
/// `grace` that no row points to, and aborts each unfinished multipart upload older than `grace`
/// that no row records. They come from a crash between S3 and the database: an upload completed
/// in S3 whose row was deleted meanwhile, a multipart upload started but never recorded, a copy a
/// storage migration made but never switched to. The grace keeps it off objects whose row is
/// about to be committed. No row ever points to an object this removes.
struct OrphanObjectSweeper: PeriodicSweep {
    let pool: PostgresPool
    let client: S3Client
    /// `<schema>.documents`.
    let documents: String
    let grace: Duration
    let interval: Duration
    let logger: Logger
    static let prefix = "documents/"

    func sweep() async {
        do {
            let (objects, uploads) = try await sweepOnce()
            if objects + uploads > 0 {
                logger.notice("orphan objects removed", metadata: ["objects": "\(objects)", "multipart_uploads": "\(uploads)"])
            }
        } catch {
            logger.warning("could not sweep orphan objects; will retry", metadata: ["error": "\(error)"])
        }
    }

    /// One pass; returns how many objects were deleted and how many multipart uploads aborted.
    func sweepOnce() async throws -> (objects: Int, uploads: Int) {
        let cutoff = Date().addingTimeInterval(-grace.inSeconds)
        let documents = self.documents
        var removed = 0
        var token: String?
        repeat {
            let page = try await client.listObjects(prefix: Self.prefix, continuationToken: token)
            let old = page.objects.filter { ($0.lastModified ?? Date()) < cutoff }.map(\.key)
            if !old.isEmpty {
                let known = try await pool.withConnection { db in
                    try Set(
                        db.query("SELECT object_key FROM \(documents) WHERE object_key = ANY ($1::text[])", PostgresArrayLiteral.of(old))
                            .map { try $0.decode(String.self, column: 0) })
                }
                let orphans = old.filter { !known.contains($0) }
                if let failure = try await client.deleteObjects(keys: orphans).first {
                    logger.warning("an orphan object could not be deleted", metadata: ["key": "\(failure.key)", "code": "\(failure.code)"])
                }
                removed += orphans.count
            }
            token = page.nextContinuationToken
        } while token != nil && !Task.isShuttingDownGracefully
        var aborted = 0
        let uploads = try await client.listMultipartUploads(prefix: Self.prefix).filter { ($0.initiated ?? Date()) < cutoff }
        if !uploads.isEmpty {
            let known = try await pool.withConnection { db in
                try Set(
                    db.query(
                        "SELECT multipart_upload_id FROM \(documents) WHERE multipart_upload_id = ANY ($1::text[])",
                        PostgresArrayLiteral.of(uploads.map(\.uploadId))
                    ).map { try $0.decode(String.self, column: 0) })
            }
            for upload in uploads where !known.contains(upload.uploadId) {
                try await client.abortMultipartUpload(key: upload.key, uploadId: upload.uploadId)
                aborted += 1
            }
        }
        return (removed, aborted)
    }
}
