import Contracts
import Foundation

/// Whether a user must accept a document again: a pure rule over the versions Legal published and
/// the user's last action, so it is tested without a database.
enum AcceptanceRules {
    /// The user's last action on one document type.
    struct LastAction: Equatable {
        var action: AcceptanceAction
        var version: String
        var recordedAt: Date
    }

    /// - `versions`: every published version of the type.
    /// - Returns the status now: the version in effect is Legal's
    ///   (``LegalVersionSummary/inEffect(_:at:)``); the user needs to accept when they never did, last declined, or a **material**
    ///   version took effect (by `now`) after the version they accepted took effect. Editorial
    ///   versions never set it; neither do versions not yet in effect.
    static func status(
        of type: LegalDocumentType, versions: [LegalVersionSummary], last: LastAction?, now: Date
    ) -> AcceptanceStatus {
        let inEffect = versions.filter { $0.effectiveAt <= now }
        let current = LegalVersionSummary.inEffect(inEffect, at: now)
        let needs: Bool
        if let last, last.action != .decline {
            if let accepted = versions.first(where: { $0.version == last.version }) {
                needs = inEffect.contains { $0.material && $0.effectiveAt > accepted.effectiveAt && $0.version != accepted.version }
            } else {
                // Accepted a version we do not know: treat as never accepted.
                needs = true
            }
        } else {
            needs = true
        }
        return AcceptanceStatus(
            documentType: type, currentVersion: current?.version, lastAction: last?.action, lastVersion: last?.version,
            lastRecordedAt: last?.recordedAt, needsAcceptance: needs)
    }
}
