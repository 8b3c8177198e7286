import Contracts
import Foundation

/// Builds the ``AccountUser`` callers see: the stored fields, and the terms flags from the user's
/// own standing (Accounts is the one synchronous writer of an act, so its `tos_version`,
/// `tos_accepted_at` and `tos_declined_at` are the user's last word, before Audit has chained it)
/// against the versions Legal published (``TermsCatalog``): a new material version shows as
/// `needsToAcceptTOS` by the rule Audit and the gateway apply (``LegalVersionSummary``).
struct UserView: Sendable {
    let peers: Peers

    func present(_ user: StoredUser) async throws -> AccountUser {
        let versions = try await peers.terms.versions()
        let now = Date()
        let accepted = user.tosAcceptedAt != nil && user.tosDeclinedAt == nil ? user.tosVersion : nil
        let current = LegalVersionSummary.inEffect(versions, at: now)?.version
        let needs = LegalVersionSummary.needsAcceptance(afterAccepting: accepted, versions: versions, at: now)
        return Self.view(user, hasAcceptedTOS: accepted != nil && accepted == current, needsToAcceptTOS: needs)
    }

    /// The user right after their acceptance of the version in effect was stored: the last action
    /// is an acceptance of the current version, so no material version took effect since.
    static func justAccepted(_ user: StoredUser) -> AccountUser {
        view(user, hasAcceptedTOS: true, needsToAcceptTOS: false)
    }

    private static func view(_ user: StoredUser, hasAcceptedTOS: Bool, needsToAcceptTOS: Bool) -> AccountUser {
        AccountUser(
            id: user.id, appleId: user.appleId, email: user.email, name: user.name, username: user.username, state: user.state,
            eligibilityConfirmedAt: user.eligibilityConfirmedAt, tosVersion: user.tosVersion, tosAcceptedAt: user.tosAcceptedAt,
            createdAt: user.createdAt, eligibilityRulesVersion: user.eligibilityRulesVersion, hasConfirmedEligibility: true,
            hasAcceptedTOS: hasAcceptedTOS, needsToAcceptTOS: needsToAcceptTOS)
    }

    /// A sign-in that has not confirmed eligibility: nothing is stored, so there is no id yet.
    static func unconfirmed(appleId: String, email: String?, name: String?) -> AccountUser {
        AccountUser(
            id: nil, appleId: appleId, email: email, name: name, username: nil, state: nil, eligibilityConfirmedAt: nil,
            tosVersion: nil, tosAcceptedAt: nil, createdAt: nil, eligibilityRulesVersion: nil, hasConfirmedEligibility: false,
            hasAcceptedTOS: false, needsToAcceptTOS: true)
    }
}
