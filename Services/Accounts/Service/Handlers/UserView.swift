import Contracts
import Foundation

/// Builds the ``AccountUser`` callers see: the stored fields, and the terms flags from Audit's
/// status (the single source of who accepted what), so a new material terms version shows as
/// `needsToAcceptTOS` without Accounts tracking versions itself.
struct UserView: Sendable {
    let peers: Peers

    func present(_ user: StoredUser) async throws -> AccountUser {
        let status = try await peers.termsStatus(of: user.id)
        let hasAccepted = status.map { $0.lastAction == .accept && $0.lastVersion != nil && $0.lastVersion == $0.currentVersion } ?? false
        return Self.view(user, hasAcceptedTOS: hasAccepted, needsToAcceptTOS: status?.needsAcceptance ?? true)
    }

    /// The user right after Audit committed their acceptance of the version in effect: Audit's
    /// status would now say exactly this (last action an acceptance of the current version, so
    /// no material version took effect since), so it is not asked again.
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
