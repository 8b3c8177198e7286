import Bus
import Contracts
import Foundation
import Logging
import Postgres

/// Applies `account.deleted` from Accounts: every document of that user goes (rows, share links,
/// large objects), inside the event consumer's transaction, so it happens exactly once even
/// across restarts and catch-ups. Other Accounts events are ignored. The counts are logged as the
/// event is applied (should its transaction then fail, it is applied and logged again at the next
/// catch-up) and kept in `account_cleanups`, which commits with the deletion.
struct AccountCleanup: Sendable {
    let store: DocumentsStore
    let logger: Logger

    func apply(_ event: Envelope, on db: isolated PostgresConnection) throws {
        guard event.type == AccountsEvents.deleted else { return }
        let deleted = try event.decodePayload(AccountDeleted.self)
        let counts = try store.deleteAll(of: deleted.userId, deletedAt: deleted.deletedAt, on: db)
        logger.notice(
            "account deleted: documents removed",
            metadata: [
                "user": "\(deleted.userId)", "documents": "\(counts.documents)", "bytes": "\(counts.bytes)",
                "share_links": "\(counts.shareLinks)", "sequence": "\(event.sequence.map(String.init) ?? "-")",
            ])
    }
}
