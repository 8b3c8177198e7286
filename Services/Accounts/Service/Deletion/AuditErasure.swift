import Bus
import Contracts
import Foundation
import Logging
import ServiceKit
import ServiceLifecycle

/// Erases deleted users from the Audit record (`audit.erase_subject`: the consent proofs stay,
/// pseudonymised). Tried right after a deletion commits, and swept every `interval` for any the
/// first try missed (Audit down, a crash in between): the tombstone's `audit_erased_at` is set
/// only once Audit has answered, and erasure is idempotent, so it happens at least once and
/// harmlessly more.
struct AuditErasure: PeriodicSweep {
    let store: AccountsStore
    let audit: @Sendable () async throws -> RPCClient
    let interval: Duration
    let logger: Logger

    /// Every erasure still due, oldest first.
    func sweep() async {
        do {
            for id in try await store.erasuresDue(limit: 100) { await eraseNow(id) }
        } catch {
            logger.warning("could not read the erasures due", metadata: ["error": "\(error)"])
        }
    }

    func eraseNow(_ id: UUID) async {
        do {
            let reply = try await audit().call(
                AuditEraseSubject.self, .init(userId: id), principal: .service("accounts"), timeout: .seconds(10))
            try await store.erased(id)
            logger.info("audit subject erased", metadata: ["user": "\(id)", "records": "\(reply.erasedRecords)"])
        } catch {
            logger.warning("audit erasure failed; will retry", metadata: ["user": "\(id)", "error": "\(error)"])
        }
    }
}
