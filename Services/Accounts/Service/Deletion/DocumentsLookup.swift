import Bus
import Contracts
import Foundation
import Logging

/// Asks the Documents service what it holds for a user (`documents.usage`), for the deletion
/// preview and certificate. Never in the way of a deletion: when Documents is not asked
/// (`ACCOUNTS_DOCUMENTS_USAGE_TIMEOUT` 0) or does not answer within the deadline, the answer is
/// nil and the caller says the counts could not be gathered. The documents themselves are deleted
/// by Documents on `account.deleted`, whatever this returned.
struct DocumentsLookup: Sendable {
    /// Nil: Documents is not asked.
    let client: (@Sendable () async throws -> RPCClient)?
    let timeout: Duration
    let logger: Logger

    func usage(of id: UUID) async -> DocumentsUsage.Reply? {
        guard let client else { return nil }
        do {
            return try await client().call(DocumentsUsage.self, .init(userId: id), principal: .service("accounts"), timeout: timeout)
        } catch {
            logger.warning("documents usage could not be gathered", metadata: ["user": "\(id)", "error": "\(error)"])
            return nil
        }
    }
}
