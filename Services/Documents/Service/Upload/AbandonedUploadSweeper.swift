import Bus
import Foundation
import Logging
import ServiceKit
import ServiceLifecycle

/// Every `interval`, deletes uploads idle for longer than `expiry` (see
/// ``DocumentsStore/sweepAbandonedUploads(idleSeconds:limit:)``). Safe with several instances:
/// each takes rows the others have not locked.
struct AbandonedUploadSweeper: PeriodicSweep {
    let store: DocumentsStore
    let expiry: Duration
    let interval: Duration
    let logger: Logger

    func sweep() async {
        do {
            var swept: [UUID]
            repeat {
                swept = try await store.sweepAbandonedUploads(idleSeconds: expiry.inSeconds, limit: 100)
                if !swept.isEmpty {
                    logger.notice("abandoned uploads deleted", metadata: ["count": "\(swept.count)", "idle_longer_than": "\(expiry)"])
                }
            } while swept.count == 100 && !Task.isShuttingDownGracefully
        } catch {
            logger.warning("could not sweep abandoned uploads; will retry", metadata: ["error": "\(error)"])
        }
    }
}
