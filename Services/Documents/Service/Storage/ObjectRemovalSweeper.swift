import Foundation
import Logging
import ObjectStorage
import Postgres
import ServiceKit
import ServiceLifecycle

/// Deletes the objects queued in `object_removals` (a deleted document, a deleted account, an
/// expired upload) and aborts their unfinished multipart uploads, up to 1000 per S3 request,
/// until the queue is empty; then looks again every `interval`. A row leaves the queue only once
/// the store confirmed its removal: while the store is down the queue waits (each failure is
/// counted and kept in the row) and nothing is dropped. Several instances may take the same rows:
/// deleting twice is harmless.
struct ObjectRemovalSweeper: PeriodicSweep {
    let pool: PostgresPool
    let client: S3Client
    /// `<schema>.object_removals`.
    let removals: String
    let interval: Duration
    let logger: Logger

    func sweep() async { await drain() }

    /// Removes batches until the queue is empty, a batch fails, or shutdown begins; returns how many went.
    @discardableResult
    func drain() async -> Int {
        var total = 0
        while !Task.isShuttingDownGracefully {
            let removals = self.removals
            do {
                let batch = try await pool.withConnection { db in
                    try db.query("SELECT id, object_key, multipart_upload_id FROM \(removals) ORDER BY id LIMIT 1000").map {
                        try $0.decode(Int64.self, String.self, String?.self)
                    }
                }
                guard !batch.isEmpty else { break }
                do {
                    for (_, key, uploadId) in batch { if let uploadId { try await client.abortMultipartUpload(key: key, uploadId: uploadId) } }
                    let failures = try await client.deleteObjects(keys: Array(Set(batch.map(\.1))))
                    let failed = Set(failures.map(\.key))
                    let done = batch.filter { !failed.contains($0.1) }.map(\.0)
                    try await forget(done)
                    total += done.count
                    if let failure = failures.first {
                        try await noteFailure(batch.filter { failed.contains($0.1) }.map(\.0), "\(failure.code): \(failure.message)")
                        break
                    }
                } catch {
                    try await noteFailure(batch.map(\.0), "\(error)")
                    throw error
                }
            } catch {
                logger.warning("could not remove queued objects; will retry", metadata: ["error": "\(error)"])
                break
            }
        }
        if total > 0 { logger.notice("objects of deleted documents removed", metadata: ["count": "\(total)"]) }
        return total
    }

    private func forget(_ ids: [Int64]) async throws {
        guard !ids.isEmpty else { return }
        let removals = self.removals
        let list = "{" + ids.map(String.init).joined(separator: ",") + "}"
        try await pool.withConnection { db in try db.execute("DELETE FROM \(removals) WHERE id = ANY ($1::bigint[])", list) }
    }

    private func noteFailure(_ ids: [Int64], _ error: String) async throws {
        guard !ids.isEmpty else { return }
        let removals = self.removals
        let list = "{" + ids.map(String.init).joined(separator: ",") + "}"
        try await pool.withConnection { db in
            try db.execute(
                "UPDATE \(removals) SET attempts = attempts + 1, last_error = $2 WHERE id = ANY ($1::bigint[])", list, String(error.prefix(500)))
        }
    }
}
