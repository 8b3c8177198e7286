import Foundation
import Logging
import ServiceKit
import ServiceLifecycle

/// Unlinks the large objects queued in `large_object_removals` (by a deleted account), `batch`
/// per transaction so that no transaction holds more than `batch` large-object locks, until the
/// queue is empty; then looks again every `interval`. The queue is a table, so a restart resumes
/// where the last committed batch stopped; several instances share it (`SKIP LOCKED`).
struct LargeObjectSweeper: PeriodicSweep {
    let store: DocumentsStore
    let batch: Int
    let interval: Duration
    let logger: Logger

    func sweep() async { await drain() }

    /// Unlinks batches until the queue is empty (or shutdown begins); returns how many went.
    @discardableResult
    func drain() async -> Int {
        var total = 0
        do {
            var unlinked: Int
            repeat {
                unlinked = try await store.unlinkQueuedLargeObjects(limit: batch)
                total += unlinked
            } while unlinked == batch && !Task.isShuttingDownGracefully
        } catch {
            logger.warning("could not unlink queued large objects; will retry", metadata: ["error": "\(error)"])
        }
        if total > 0 { logger.notice("large objects of deleted documents unlinked", metadata: ["count": "\(total)"]) }
        return total
    }
}
