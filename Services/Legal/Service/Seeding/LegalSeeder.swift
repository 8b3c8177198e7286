import Contracts
import Foundation
import Logging
import ServiceKit

/// Publishes the default texts on the service's first start (see ``LegalStore/seed(_:by:outbox:)``):
/// only for a document type with no version at all, so a restart, a second instance, or an edited
/// default text in a later build never adds a version next to what operators published. Seeded
/// versions emit `legal.published` like any other publish.
public struct LegalSeeder: Sendable {
    /// The `published_by` of seeded versions.
    public static let publisher = "service:legal"

    let store: LegalStore
    let outbox: Outbox
    let logger: Logger

    public init(store: LegalStore, outbox: Outbox, logger: Logger) {
        self.store = store
        self.outbox = outbox
        self.logger = logger
    }

    /// Seeds what is missing and returns what this call published (empty on every later start).
    @discardableResult
    public func seedDefaults() async throws -> [LegalVersionSummary] {
        let drafts = try DefaultTexts.drafts()
        for draft in drafts { try PublishValidation.checkContent(draft.content) }
        let seeded = try await store.seed(drafts, by: Self.publisher, outbox: outbox)
        for summary in seeded {
            logger.notice(
                "seeded default legal text",
                metadata: [
                    "type": "\(summary.type.rawValue)", "version": "\(summary.version)", "digest": "\(summary.digest)",
                ])
        }
        return seeded
    }
}
