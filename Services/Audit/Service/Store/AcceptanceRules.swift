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
        let current = LegalVersionSummary.inEffect(versions, at: now)
        // The rule the gateway enforces too; a version Audit does not know counts as never accepted.
        let accepted = last.flatMap { $0.action == .decline ? nil : $0.version }
        let needs = LegalVersionSummary.needsAcceptance(afterAccepting: accepted, versions: versions, at: now)
        return AcceptanceStatus(
            documentType: type, currentVersion: current?.version, lastAction: last?.action, lastVersion: last?.version,
            lastRecordedAt: last?.recordedAt, needsAcceptance: needs)
    }
}
